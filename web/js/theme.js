// Light/dark theme. Without a choice the page follows the OS (prefers-color-scheme, in
// style.css); the toggle stores an explicit choice that overrides it. Loaded as a classic
// script in <head> so the stored theme applies before the first paint (no flash).
(function () {
  var KEY = 'brisk.theme.v1';
  function stored() {
    try {
      var t = localStorage.getItem(KEY);
      return t === 'light' || t === 'dark' ? t : null;
    } catch (e) {
      return null;
    }
  }
  function effective() {
    return stored() || (matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light');
  }
  function apply() {
    var t = stored();
    if (t) document.documentElement.setAttribute('data-theme', t);
    else document.documentElement.removeAttribute('data-theme');
    var b = document.getElementById('theme-toggle');
    if (b) {
      var next = effective() === 'dark' ? 'light' : 'dark';
      b.textContent = next === 'dark' ? '☾' : '☀';
      b.title = 'Switch to the ' + next + ' theme';
      b.setAttribute('aria-label', b.title);
    }
  }
  apply();
  document.addEventListener('DOMContentLoaded', function () {
    var b = document.getElementById('theme-toggle');
    if (!b) return;
    apply();
    b.addEventListener('click', function () {
      try {
        localStorage.setItem(KEY, effective() === 'dark' ? 'light' : 'dark');
      } catch (e) {
        // storage refused: the choice lasts until reload
        document.documentElement.setAttribute('data-theme',
                                              effective() === 'dark' ? 'light' : 'dark');
        return;
      }
      apply();
    });
  });
})();
