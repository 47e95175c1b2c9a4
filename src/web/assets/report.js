// Progressive enhancement for the report page; the page reads the same without it.
// - A photo that fails to load (taken down at the auction, a dead CDN) becomes a placeholder tile.
// - Share: the phone's share sheet where there is one, else the link copied to the clipboard.
(function () {
  'use strict';

  function placeholder(img) {
    if (img.dataset.failed) return;
    img.dataset.failed = '1';
    var tile = document.createElement('span');
    tile.className = 'photo-placeholder';
    tile.setAttribute('role', 'img');
    tile.setAttribute('aria-label', img.alt);
    var text = document.createElement('span');
    text.textContent = img.getAttribute('data-unavailable') || '';
    tile.appendChild(text);
    img.replaceWith(tile);
  }

  // Errors of images do not bubble; a capturing listener sees them. Images that failed before this
  // script ran are found by their state.
  document.addEventListener(
    'error',
    function (event) {
      var target = event.target;
      if (target && target.tagName === 'IMG' && target.closest('.photo-grid')) placeholder(target);
    },
    true,
  );

  function sweep() {
    var images = document.querySelectorAll('.photo-grid img');
    for (var i = 0; i < images.length; i++) {
      var img = images[i];
      if (img.complete && img.naturalWidth === 0 && img.getAttribute('src')) placeholder(img);
    }
  }

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    return new Promise(function (resolve, reject) {
      var area = document.createElement('textarea');
      area.value = text;
      area.setAttribute('readonly', '');
      area.className = 'visually-hidden';
      document.body.appendChild(area);
      area.select();
      var ok = false;
      try {
        ok = document.execCommand('copy');
      } catch {
        ok = false;
      }
      document.body.removeChild(area);
      if (ok) resolve();
      else reject(new Error('copy refused'));
    });
  }

  function setUpShare() {
    var button = document.querySelector('[data-share]');
    if (!button) return;
    var status = document.querySelector('.report-actions__status');
    var url = button.getAttribute('data-share-url');
    var title = button.getAttribute('data-share-title');
    // Phones (touch, a share sheet) share; elsewhere the button copies the link.
    var canShare = typeof navigator.share === 'function' && window.matchMedia('(pointer: coarse)').matches;
    button.hidden = false;
    button.addEventListener('click', function () {
      if (canShare) {
        navigator.share({ title: title, url: url }).catch(function () {});
        return;
      }
      copyText(url).then(
        function () {
          if (status) status.textContent = button.getAttribute('data-copied');
        },
        function () {
          if (status) status.textContent = button.getAttribute('data-failed');
        },
      );
    });
  }

  function setUp() {
    sweep();
    setUpShare();
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
