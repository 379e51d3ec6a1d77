// Where a text fragment (#:~:text=...) lands on a rendered page, following the WICG Text Fragments
// algorithm as Chromium implements it, closely enough to tell the cited section from another place:
// the page's visible text in document order, in runs that a match cannot cross (each block element's
// own text); textStart at a word start, after `prefix-` (whitespace and block boundaries between them
// allowed), then `textEnd` after it, then `-suffix`. The first match wins. Returns the element where
// the match starts, and whether it lies in the section whose heading has id `anchor`.
([directive, anchor]) => {
  const values = directive.replace(/^text=/, "").split(",");
  let prefix = null, suffix = null;
  if (values[0].endsWith("-")) prefix = values.shift().slice(0, -1);
  if (values.length && values[values.length - 1].startsWith("-")) suffix = values.pop().slice(1);
  const [start, end] = values.map(decodeURIComponent);
  const norm = s => s.replace(/\s+/g, " ").toLowerCase();
  const want = {prefix: prefix && norm(decodeURIComponent(prefix)), start: norm(start),
                end: end ? norm(end) : null, suffix: suffix && norm(decodeURIComponent(suffix))};
  const blockOf = node => {
    let el = node.parentElement;
    while (el && el !== document.body && getComputedStyle(el).display.startsWith("inline")) el = el.parentElement;
    return el;
  };
  const runs = [];  // {block, text}
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  let node, last = null;
  while ((node = walker.nextNode())) {
    const parent = node.parentElement;
    if (!parent || parent.closest("script,style,noscript,#bookrag-widget") || !parent.checkVisibility()) continue;
    const block = blockOf(node);
    if (last && last.block === block) last.text += node.textContent;
    else { last = {block, text: node.textContent}; runs.push(last); }
  }
  runs.forEach(r => { r.text = norm(r.text); });
  const isWord = c => !!c && /[\p{L}\p{N}_]/u.test(c);
  const bounded = (text, at, len) => !isWord(text[at - 1]) && !isWord(text[at + len]);
  // Positions are [run, offset]; "next non-whitespace" steps over spaces and run boundaries.
  const skipSpace = ([r, o]) => {
    while (r < runs.length) {
      while (o < runs[r].text.length && runs[r].text[o] === " ") o++;
      if (o < runs[r].text.length) return [r, o];
      r++; o = 0;
    }
    return [r, o];
  };
  const findFrom = (needle, [r, o]) => {
    for (; r < runs.length; r++, o = 0) {
      let at = runs[r].text.indexOf(needle, o);
      while (at >= 0) {
        if (bounded(runs[r].text, at, needle.length)) return [r, at];
        at = runs[r].text.indexOf(needle, at + 1);
      }
    }
    return null;
  };
  const startsAt = (needle, [r, o]) => r < runs.length && runs[r].text.startsWith(needle, o)
    && bounded(runs[r].text, o, needle.length);
  let from = [0, 0];
  for (let guard = 0; guard < 100000; guard++) {
    let startAt;
    if (want.prefix) {
      const p = findFrom(want.prefix, from);
      if (!p) return {found: false};
      from = [p[0], p[1] + 1];
      const after = skipSpace([p[0], p[1] + want.prefix.length]);
      if (!startsAt(want.start, after)) continue;
      startAt = after;
    } else {
      startAt = findFrom(want.start, from);
      if (!startAt) return {found: false};
      from = [startAt[0], startAt[1] + 1];
    }
    let tail = [startAt[0], startAt[1] + want.start.length];
    if (want.end) {
      const e = findFrom(want.end, tail);
      if (!e) return {found: false};
      tail = [e[0], e[1] + want.end.length];
    }
    if (want.suffix && !startsAt(want.suffix, skipSpace(tail))) continue;
    const block = runs[startAt[0]].block;
    const heading = anchor ? document.getElementById(anchor) : document.querySelector("article h1, article header");
    let inSection = false;
    if (heading) {
      const level = /^H(\d)$/.test(heading.tagName) ? +heading.tagName[1] : 1;
      const headings = [...document.querySelectorAll("article h1, article h2, article h3, article h4, article h5, article h6")];
      const next = headings.find(h => (heading.compareDocumentPosition(h) & Node.DOCUMENT_POSITION_FOLLOWING)
                                      && +h.tagName[1] <= level);
      // A chunk may begin with the end of the section before its own (the packer carries text over):
      // the cited passage starts at the heading before the anchor's at the earliest.
      const previous = headings.filter(h => h.compareDocumentPosition(heading) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
      const from = previous || heading;
      const afterHeading = block === from || from.contains(block)
        || !!(from.compareDocumentPosition(block) & Node.DOCUMENT_POSITION_FOLLOWING);
      const beforeNext = !next || !!(next.compareDocumentPosition(block) & Node.DOCUMENT_POSITION_PRECEDING);
      inSection = afterHeading && beforeNext && !!block.closest("article");
    }
    return {found: true, inSection, startsOnHeading: /^H\d$/.test(block.tagName),
            where: block.tagName + ": " + runs[startAt[0]].text.slice(0, 80)};
  }
  return {found: false};
}
