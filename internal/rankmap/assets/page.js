"use strict";
// The rank map's behaviour. The groups are computed here from each
// module's grid (sizes and offset) the way HyperCommGrid enumerates them,
// so that the page stays small at any world size; the Go side's browser
// test checks them against mimoplan's own enumeration.
(function () {
  const D = JSON.parse(document.getElementById("data").textContent);
  const palette = ["#1b1b1b", "#c2185b", "#1565c0", "#2e7d32", "#6a1b9a", "#ef6c00", "#00838f", "#5d4037"];
  const $ = (s, el) => (el || document).querySelector(s);
  const $$ = (s, el) => Array.from((el || document).querySelectorAll(s));
  const info = $("#info");
  let kind = D.kind;
  const embd = D.kinds.find(k => k.name === "embd");
  let selected = null;

  function view(m, name) { return name === "expert" ? m.expert : m.base; }

  // coords returns rank r's coordinate along each dim of a view.
  function coords(m, v, r) {
    let local = r - m.offset, out = [];
    for (const [, size] of v) { out.push(local % size); local = Math.floor(local / size); }
    return out;
  }

  // group returns {index, members} of the group of kind k that holds r in
  // module m, or null: members vary the kind's dims (first dim fastest),
  // the index is the other dims' coordinates read as a number.
  function group(m, k, r, indexOnly) {
    if (r < m.offset || r >= m.offset + m.n) return null;
    if (k.language && m.name !== "language") return null;
    const v = view(m, k.view), c = coords(m, v, r);
    if (k.name === "embd" || k.name === "pos_embd") {
      // the first and last member of each pp group (only the first for
      // pos_embd): default_embedding_ranks on each pipeline
      const pp = c[c.length - 1], last = v[v.length - 1][1] - 1;
      if (pp !== 0 && !(k.name === "embd" && pp === last)) return null;
    }
    let stride = 1, base = r, index = 0, w = 1;
    const inner = [];
    v.forEach(([name, size], i) => {
      if (k.dims.includes(name)) { inner.push([size, stride]); base -= c[i] * stride; }
      else { index += c[i] * w; w *= size; }
      stride *= size;
    });
    if (indexOnly) return { index };
    let members = [base];
    for (const [size, s] of inner) {
      const next = [];
      for (let j = 0; j < size; j++) for (const x of members) next.push(x + j * s);
      members = next;
    }
    members.sort((a, b) => a - b);
    if (k.name === "embd") members = members.length > 1 ? [members[0], members[members.length - 1]] : members;
    if (k.name === "pos_embd") members = [members[0]];
    return { index, members };
  }

  function modulesOf(r) { return D.modules.filter(m => r >= m.offset && r < m.offset + m.n); }

  function leader(m, r) {
    if (!m.role) return false;
    const g = group(m, { name: "lanes", dims: ["tp", "cp", "pp"], view: "base" }, r).members;
    return m.role === "src" ? g[g.length - 1] === r : g[0] === r;
  }

  function stage(m, r) { const c = coords(m, m.base, r); return c[c.length - 1]; }

  function tint(hex, s, pp) {
    if (pp <= 1) return hex;
    const f = 0.55 * s / (pp - 1);
    const mix = i => { const c = parseInt(hex.substr(i, 2), 16); return Math.round(c + f * (255 - c)).toString(16).padStart(2, "0"); };
    return "#" + mix(1) + mix(3) + mix(5);
  }

  function fold(members) {
    if (members.length <= 24) return "[" + members.join(" ") + "]";
    return "[" + members.slice(0, 6).join(" ") + " ... " + members[members.length - 1] + "] (" + members.length + " ranks)";
  }

  function where(r) {
    const row = Math.floor(r / D.row);
    return D.rowName + " " + row + ", " + (D.rowName === "node" ? "local GPU " : "place ") + (r % D.row);
  }

  // show fills the side panel with rank r: its place, its coordinates in
  // both views of every module it serves and every group it belongs to.
  function show(r) {
    let html = "<h2>rank " + r + " (" + where(r) + ")</h2>";
    for (const m of modulesOf(r)) {
      const pos = (v) => coords(m, v, r).map((c, i) => v[i][0] + " " + c + "/" + v[i][1]).join(", ");
      html += "<p><span class=sw style=\"background:" + m.color + "\"></span><b>" + esc(m.name) + "</b>";
      if (leader(m, r)) html += " · bridge leader";
      if (m.name === "language" && group(m, embd, r, true)) html += " · embedding rank";
      html += "<br>dense: " + pos(m.base) + "<br>expert: " + pos(m.expert) + "</p><div class=g>";
      for (const k of D.kinds) {
        const g = group(m, k, r);
        if (g) html += "<div data-kind=\"" + k.name + "\">" + k.name + " #" + g.index + " " + fold(g.members) + "</div>";
      }
      html += "</div>";
    }
    info.innerHTML = html;
    info.dataset.rank = r;
  }

  function esc(s) { return String(s).replace(/[&<>"]/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;" })[c]); }

  // outline gives every rank cell the colour of its group of the chosen
  // kind, and data-group its module and group index.
  function outline() {
    const k = D.kinds.find(x => x.name === kind);
    for (const cell of $$(".cell")) {
      const r = +cell.dataset.rank;
      let g = null, m = null;
      for (const x of modulesOf(r)) { g = k && group(x, k, r, true); if (g) { m = x; break; } }
      cell.style.outlineColor = g ? palette[g.index % palette.length] : "transparent";
      cell.dataset.group = g ? m.name + ":" + g.index : "";
    }
  }

  function mates(cell, on) {
    const g = cell.dataset.group;
    if (!g) return;
    for (const c of $$(".cell")) if (c.dataset.group === g) c.classList.toggle("mate", on);
  }

  function cellFor(r) {
    const ms = modulesOf(r), el = document.createElement("div");
    el.className = "cell";
    el.dataset.rank = r;
    el.dataset.module = ms.map(m => m.name).join(" ");
    const bands = ms.map((m, i) => {
      const c = tint(m.color, stage(m, r), m.pp);
      return c + " " + (100 * i / ms.length) + "% " + (100 * (i + 1) / ms.length) + "%";
    });
    el.style.background = ms.length ? "linear-gradient(" + bands.join(",") + ")" : "#eee";
    if (ms.some(m => leader(m, r))) el.classList.add("lead");
    if (ms.some(m => m.name === "language" && group(m, embd, r, true))) el.classList.add("embd");
    el.innerHTML = "<b>" + r + "</b><i>" + ms.map(m => "pp " + stage(m, r) + "/" + m.pp).join(" | ") + "</i>";
    return el;
  }

  // drill shows row n's ranks, for a page drawn a cell per row.
  function drill(n) {
    const box = $("#drill");
    box.innerHTML = "<h2>" + D.rowName + " " + n + "</h2>";
    const row = document.createElement("div");
    row.className = "row";
    for (let r = n * D.row; r < Math.min((n + 1) * D.row, D.world); r++) row.appendChild(cellFor(r));
    box.appendChild(row);
    outline();
  }

  // pin marks the ranks a warning concerns: those it names ("first: [a
  // b]"), else its module's; on a page of nodes, the nodes that hold them.
  function pin(warn) {
    const name = warn.dataset.module;
    const named = warn.dataset.ranks ? warn.dataset.ranks.split(" ").map(Number) : null;
    const hit = r => named ? named.includes(r) : modulesOf(r).some(m => m.name === name);
    $$(".pin").forEach(x => x.classList.remove("pin"));
    for (const el of $$(".cell")) if (hit(+el.dataset.rank)) el.classList.add("pin");
    for (const el of $$(".node")) {
      const n = +el.dataset.node;
      const has = named ? named.some(r => Math.floor(r / D.row) === n) : el.dataset.modules.split(" ").includes(name);
      if (has) el.classList.add("pin");
    }
  }

  document.addEventListener("click", ev => {
    const cell = ev.target.closest(".cell"), node = ev.target.closest(".node"), warn = ev.target.closest("#warnings li");
    if (cell) {
      if (selected) selected.classList.remove("sel");
      selected = cell;
      cell.classList.add("sel");
      show(+cell.dataset.rank);
    } else if (node) {
      $$(".node.sel").forEach(x => x.classList.remove("sel"));
      node.classList.add("sel");
      drill(+node.dataset.node);
    } else if (warn) {
      pin(warn);
    }
  });
  document.addEventListener("mouseover", ev => { const c = ev.target.closest(".cell"); if (c) { mates(c, true); if (!selected) show(+c.dataset.rank); } });
  document.addEventListener("mouseout", ev => { const c = ev.target.closest(".cell"); if (c) mates(c, false); });
  $("#kind").addEventListener("change", ev => { kind = ev.target.value; outline(); });
  outline();
  document.body.dataset.ready = "1";
})();
