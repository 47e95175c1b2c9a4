// "Try it" on /docs: each operation's form calls the API on the host this page was opened on
// (same origin: no CORS, and the page's CSP allows it), with the token typed at the top of the
// page, which stays in this page's memory. Without a script the forms stay hidden; the samples
// still show how to call the API.
(function () {
  'use strict';

  function show(result, status, headers, body) {
    result.textContent = '';
    var heading = document.createElement('p');
    heading.className = 'try__status';
    heading.textContent = 'Answer: ' + status;
    result.appendChild(heading);
    var pre = document.createElement('pre');
    pre.className = 'code-block';
    pre.tabIndex = 0;
    pre.setAttribute('role', 'region');
    pre.setAttribute('aria-label', 'Answer body');
    var code = document.createElement('code');
    code.textContent = headers + '\n\n' + body;
    pre.appendChild(code);
    result.appendChild(pre);
  }

  function setUp() {
    var tokenBox = document.querySelector('[data-try-token]');
    var tokenInput = document.getElementById('try-token');
    if (!tokenBox || !tokenInput) return;
    tokenBox.hidden = false;
    var origin = document.querySelector('[data-try-origin]');
    if (origin) origin.textContent = window.location.origin;
    var base = window.location.pathname.replace(/\/docs\/?$/, '');
    Array.prototype.forEach.call(document.querySelectorAll('[data-try]'), function (form) {
      form.hidden = false;
      form.addEventListener('submit', function (event) {
        event.preventDefault();
        var result = form.querySelector('.try__result');
        var method = form.getAttribute('data-method');
        var query = new URLSearchParams();
        var body = {};
        var hasBody = false;
        Array.prototype.forEach.call(form.querySelectorAll('[data-query]'), function (input) {
          query.set(input.getAttribute('data-query'), input.value);
        });
        Array.prototype.forEach.call(form.querySelectorAll('[data-body]'), function (input) {
          body[input.getAttribute('data-body')] = input.value;
          hasBody = true;
        });
        // Path parameters go into the path ({auction} -> copart), never the query string.
        var path = form.getAttribute('data-path');
        Array.prototype.forEach.call(form.querySelectorAll('[data-path-param]'), function (input) {
          path = path.replace('{' + input.getAttribute('data-path-param') + '}', encodeURIComponent(input.value.trim()));
        });
        var search = query.toString();
        var url = base + path + (search ? '?' + search : '');
        var headers = { Authorization: tokenInput.value.trim() };
        if (hasBody) headers['Content-Type'] = 'application/json';
        result.textContent = 'Sending…';
        fetch(url, { method: method, headers: headers, body: hasBody ? JSON.stringify(body) : undefined, credentials: 'omit' })
          .then(function (response) {
            var lines = [];
            response.headers.forEach(function (value, name) {
              if (/^(content-type|ratelimit|ratelimit-policy|retry-after|x-request-id|x-ratelimit-.*|idempotent-replayed|www-authenticate)$/i.test(name)) lines.push(name + ': ' + value);
            });
            return response.text().then(function (text) {
              var pretty = text;
              try {
                pretty = JSON.stringify(JSON.parse(text), null, 2);
              } catch {
                pretty = text;
              }
              show(result, response.status + ' ' + response.statusText, lines.join('\n'), pretty);
            });
          })
          .catch(function (error) {
            result.textContent = 'The request failed: ' + error.message;
          });
      });
    });
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', setUp);
  else setUp();
})();
