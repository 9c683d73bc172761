(function () {
  var info = document.getElementById('info');
  document.querySelectorAll('.seg').forEach(function (s) {
    s.addEventListener('click', function () {
      document.querySelectorAll('.seg.sel').forEach(function (x) { x.classList.remove('sel'); });
      s.classList.add('sel');
      info.dataset.term = s.dataset.term;
      info.dataset.module = s.dataset.module;
      info.textContent = '';
      var h = document.createElement('h2');
      h.textContent = s.dataset.module + ': ' + s.dataset.label;
      var p = document.createElement('p');
      p.textContent = (Number(s.dataset.bytes) / 1073741824).toFixed(2) + ' GiB (' + s.dataset.part + '). ' + s.dataset.why;
      info.appendChild(h);
      info.appendChild(p);
    });
  });
  document.body.dataset.ready = '1';
})();
