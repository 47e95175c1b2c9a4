// Progressive enhancement for the account pages; every page works without it.
// - Copy buttons: a button with data-copy-target="<id>" copies that element's text.
// - A token just created gets the focus, so that a screen reader announces it.
// - A button with data-print opens the browser's print dialog (the invoice; the print stylesheet
//   lays it out as a document).
// - Batches: an element with data-batch-progress="<url>" of a batch not yet done polls that URL
//   every 2 s and updates its progress bar and counts until the batch is done.
(function () {
  'use strict';

  function copyText(text) {
    if (navigator.clipboard && window.isSecureContext) return navigator.clipboard.writeText(text);
    // Plain-http deployments have no clipboard API: select the text and use the old command.
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

  function setUp() {
    var buttons = document.querySelectorAll('[data-copy-target]');
    Array.prototype.forEach.call(buttons, function (button) {
      var target = document.getElementById(button.getAttribute('data-copy-target'));
      if (!target) return;
      var status = button.closest('section') && button.closest('section').querySelector('.copy-status');
      button.hidden = false;
      button.addEventListener('click', function () {
        copyText(target.textContent.trim()).then(
          function () {
            button.textContent = 'Copied';
            if (status) status.textContent = 'The token is copied to your clipboard.';
            window.setTimeout(function () {
              button.textContent = 'Copy';
            }, 2500);
          },
          function () {
            if (status) status.textContent = 'Copying is blocked here: select the token and copy it by hand.';
            var range = document.createRange();
            range.selectNodeContents(target);
            var selection = window.getSelection();
            selection.removeAllRanges();
            selection.addRange(range);
          },
        );
      });
    });
    Array.prototype.forEach.call(document.querySelectorAll('[data-print]'), function (button) {
      button.hidden = false;
      button.addEventListener('click', function () {
        window.print();
      });
    });
    var created = document.getElementById('created');
    if (created) created.focus();
    Array.prototype.forEach.call(document.querySelectorAll('[data-batch-progress]'), pollBatch);
  }

  function pollBatch(element) {
    if (element.getAttribute('data-batch-status') === 'done') return;
    var url = element.getAttribute('data-batch-progress');
    var timer = window.setInterval(function () {
      fetch(url, { headers: { accept: 'application/json' }, credentials: 'same-origin' })
        .then(function (response) {
          if (!response.ok) throw new Error('progress ' + response.status);
          return response.json();
        })
        .then(function (batch) {
          var bar = element.querySelector('progress');
          if (bar) {
            bar.value = batch.done;
            bar.textContent = batch.done + ' of ' + batch.total;
          }
          var done = element.querySelector('[data-batch-done]');
          if (done) done.textContent = String(batch.done);
          var state = element.querySelector('[data-batch-state]');
          if (state) state.textContent = batch.status;
          var counts = Object.keys(batch.counts).map(function (code) {
            return batch.counts[code] + ' × ' + code;
          });
          var list = element.querySelector('[data-batch-counts]');
          if (!list && counts.length > 0 && state) {
            list = document.createElement('span');
            list.setAttribute('data-batch-counts', '');
            state.parentNode.appendChild(document.createTextNode(' · '));
            state.parentNode.appendChild(list);
          }
          if (list) list.textContent = counts.join(', ');
          element.setAttribute('data-batch-status', batch.status);
          if (batch.status === 'done') window.clearInterval(timer);
        })
        .catch(function () {
          window.clearInterval(timer);
        });
    }, 2000);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
