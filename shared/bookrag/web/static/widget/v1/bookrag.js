/*! bookrag "Ask the book" widget, v1. No framework, no build step.
 * <script src="https://API/widget/v1/bookrag.js" data-book="My Book" defer></script>; the data-* attributes
 * (api, stream-api, position, avoid, book, key, page-url, locale, version) are in the README, "The widget".
 * Nothing is requested (not even the stylesheet) until the reader opens the panel or asks about a selection; the
 * first opening also asks data-api's /api/pages/suggestions for the questions this page answers (shown as buttons).
 * Thumbs up/down under an answer post the vote to data-api's /api/feedback (its X-Query-Id, the same key); a
 * thumbs-down is sent when clicked, its optional comment afterwards.
 */
(function () {
  "use strict";
  var script = document.currentScript;
  if (!script || window.__bookragWidget) return;
  window.__bookragWidget = true;

  var ds = script.dataset;
  var scriptUrl = new URL(script.src, location.href);
  var API = (ds.api || scriptUrl.origin).replace(/\/+$/, "");
  var CSS_URL = new URL("bookrag.css", scriptUrl).href;
  var STREAM = (function (url) {
    if (!url) return API + "/api/answer/stream";
    url = url.replace(/\/+$/, "");
    return /\/api\/answer\/stream$/.test(url) ? url : url + "/api/answer/stream";
  })(ds.streamApi);
  var LEFT = ds.position === "bottom-left";
  // Fixed controls of the theme (Docusaurus: back-to-top, the table of contents column) and the owner's.
  var AVOID = [".theme-back-to-top-button", ".theme-doc-toc-desktop"].concat(
    (ds.avoid || "").split(",").map(function (x) { return x.trim(); }).filter(Boolean));
  var BOOK = ds.book || "the book";
  var KEY = ds.key || "";
  var MAX_SELECTION = 2000, MAX_QUESTION = 1000, MAX_TURNS = 10, MAX_ANSWER = 1500, MAX_BODY = 14000;
  var MAX_COMMENT = 500;
  var uid = 0;

  var MESSAGES = {
    RATE_LIMITED: "You're asking faster than the book can answer. Please wait {s} and try again.",
    INVALID_QUERY: "Please type a question about the book.",
    MISSING_QUERY: "Please type a question about the book.",
    INVALID_QUERY_LENGTH: "That question is too long; please shorten it (1000 characters at most).",
    SELECTION_TOO_LONG: "The selected text is too long; please select a shorter passage.",
    INVALID_SELECTION: "The selected text could not be used; please select it again.",
    HISTORY_TOO_LONG: "This conversation is too long; start a new one with the New button.",
    INVALID_HISTORY: "This conversation could not be continued; start a new one with the New button.",
    PAYLOAD_TOO_LARGE: "That request is too large; please shorten the question or the selection.",
    AUTH_REQUIRED: "This site's book assistant is not set up correctly (no key). Please tell the site's owner.",
    INVALID_API_KEY: "This site's book assistant is not set up correctly (key refused). Please tell the site's owner.",
    ORIGIN_NOT_ALLOWED: "This site is not allowed to use the book assistant. Please tell the site's owner.",
    SECRET_KEY_IN_BROWSER: "This site's book assistant is not set up correctly (wrong kind of key). Please tell the site's owner.",
    KEY_SCOPE: "This site's book assistant is not set up correctly (key scope). Please tell the site's owner.",
    AUTH_UNAVAILABLE: "The book assistant is temporarily unavailable. Please try again in a moment.",
    network: "The book assistant can't be reached right now. Check your connection, or try again in a moment.",
    unavailable: "The book assistant is temporarily unavailable. Please try again in a moment.",
    invalid: "The question could not be sent as it is; please rephrase it.",
    other: "Something went wrong while answering. Please try again."
  };

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    for (var name in attrs || {}) node.setAttribute(name, attrs[name]);
    if (text != null) node.textContent = text;
    return node;
  }

  // Answer text: `code`, **strong**, *emphasis* and [n] markers are the only markup; the rest is text, never HTML.
  function renderText(target, text, sources) {
    target.textContent = "";
    var parts = text.split(/(`[^`]+`|\[\d+\]|\*\*[^*]+\*\*|\*[^*\s][^*]*\*)/);
    parts.forEach(function (part) {
      if (!part) return;
      var code = /^`([^`]+)`$/.exec(part), marker = /^\[(\d+)\]$/.exec(part);
      var strong = /^\*\*([^*]+)\*\*$/.exec(part), em = !strong && /^\*([^*]+)\*$/.exec(part);
      if (code) { target.appendChild(el("code", {}, code[1])); return; }
      if (strong || em) { target.appendChild(el(strong ? "strong" : "em", {}, (strong || em)[1])); return; }
      var src = marker && sources && sources[+marker[1] - 1];
      if (src) {
        var a = el("a", { href: link(src), target: "_blank", rel: "noopener", "class": "bookrag-marker",
          "aria-label": "Source " + marker[1] + ": " + src.chapter + ", " + src.section }, "[" + marker[1] + "]");
        target.appendChild(a);
        return;
      }
      target.appendChild(document.createTextNode(part));
    });
  }

  // Answer Markdown: paragraphs, "-"/"*"/"1." lists and ``` fenced code become elements; code is text in a
  // <pre> that scrolls sideways inside the panel. Nothing is ever parsed as HTML.
  function renderMarkdown(target, text, sources) {
    target.textContent = "";
    var lines = text.replace(/\r\n?/g, "\n").split("\n"), i = 0, para = [], list = null;
    function flush() {
      if (para.length) { var p = el("p"); renderText(p, para.join(" "), sources); target.appendChild(p); }
      para = [];
    }
    while (i < lines.length) {
      var line = lines[i], fence = /^\s*(```+|~~~+)\s*([\w+-]*)\s*$/.exec(line);
      if (fence) {
        flush(); list = null;
        var code = [], close = fence[1];
        for (i++; i < lines.length && lines[i].trim() !== close; i++) code.push(lines[i]);
        var pre = el("pre", { "class": "bookrag-code", tabindex: "0" });
        pre.appendChild(el("code", fence[2] ? { "data-lang": fence[2] } : {}, code.join("\n")));
        target.appendChild(pre);
        i++;
        continue;
      }
      var item = /^\s*(?:([-*+])|(\d+)[.)])\s+(.*)$/.exec(line);
      if (item) {
        flush();
        var tag = item[1] ? "ul" : "ol";
        if (!list || list.tagName.toLowerCase() !== tag) { list = el(tag); target.appendChild(list); }
        var li = el("li");
        renderText(li, item[3], sources);
        list.appendChild(li);
      } else if (!line.trim()) { flush(); list = null; }
      else if (list && /^\s{2,}\S/.test(line)) {  // a list item's continuation line
        var last = list.lastChild; renderText(last, last.textContent + " " + line.trim(), sources);
      } else { list = null; para.push(line.trim().replace(/^#{1,6}\s+/, "")); }
      i++;
    }
    flush();
  }

  // Icons as inline SVG drawn in currentColor: an emoji needs a colour-emoji font, which Debian's chromium
  // (and many Linux desktops) lack, so the thumbs rendered as empty boxes; an SVG draws the same everywhere
  // and follows the theme's text colour in dark mode. Paths from Feather icons (MIT), 24x24, stroked.
  var ICONS = {
    up: "M14 9V5a3 3 0 0 0-3-3l-4 9v11h11.28a2 2 0 0 0 2-1.7l1.38-9a2 2 0 0 0-2-2.3zM7 22H4a2 2 0 0 1-2-2v-7a2 2 0 0 1 2-2h3",
    down: "M10 15v4a3 3 0 0 0 3 3l4-9V2H5.72a2 2 0 0 0-2 1.7l-1.38 9a2 2 0 0 0 2 2.3zm7-13h2.67A2.31 2.31 0 0 1 22 4v7a2.31 2.31 0 0 1-2.33 2H17",
    book: "M2 3h6a4 4 0 0 1 4 4v14a3 3 0 0 0-3-3H2zM22 3h-6a4 4 0 0 0-4 4v14a3 3 0 0 1 3-3h7z",
    close: "M18 6 6 18M6 6l12 12"
  };
  // Decorative: the button around it carries the accessible name (its aria-label or its text). Sized by its
  // attributes, so it draws right before the stylesheet loads (the launcher is shown without it).
  function icon(name, size) {
    var NS = "http://www.w3.org/2000/svg";
    var svg = document.createElementNS(NS, "svg");
    var attrs = { viewBox: "0 0 24 24", width: String(size), height: String(size), fill: "none", stroke: "currentColor",
      "stroke-width": "2", "stroke-linecap": "round", "stroke-linejoin": "round", "aria-hidden": "true",
      focusable: "false", "class": "bookrag-icon", "data-icon": name };
    for (var a in attrs) svg.setAttribute(a, attrs[a]);
    var path = document.createElementNS(NS, "path");
    path.setAttribute("d", ICONS[name]);
    svg.appendChild(path);
    return svg;
  }

  function link(src) {
    return src.quotes && src.quotes.length ? src.quotes[0].fragment_url : src.source_url;
  }

  // --- theme: Docusaurus's html[data-theme], else the reader's system preference
  function isDark() {
    var t = document.documentElement.getAttribute("data-theme");
    if (t) return t === "dark";
    return !!(window.matchMedia && matchMedia("(prefers-color-scheme: dark)").matches);
  }
  var root = el("div", { "class": "bookrag-root", id: "bookrag-widget" });
  function applyTheme() { root.classList.toggle("bookrag-dark", isDark()); }
  new MutationObserver(applyTheme).observe(document.documentElement, { attributes: true, attributeFilter: ["data-theme"] });
  if (window.matchMedia) {
    var mq = matchMedia("(prefers-color-scheme: dark)");
    if (mq.addEventListener) mq.addEventListener("change", applyTheme);
  }

  // --- the launcher and the selection button: styled inline, so nothing loads before they are used
  var launcher = el("button", { type: "button", "class": "bookrag-launcher", "aria-haspopup": "dialog",
    "aria-expanded": "false", "aria-controls": "bookrag-panel", "data-testid": "bookrag-open" });
  launcher.appendChild(icon("book", 18));
  launcher.appendChild(document.createTextNode("Ask the book"));  // its accessible name
  launcher.style.cssText = "position:fixed;" + (LEFT ? "left" : "right") + ":20px;bottom:20px;z-index:2147483000;padding:10px 16px;" +
    "border-radius:999px;border:0;background:#2e6bd6;color:#fff;font:600 15px/1.2 system-ui,sans-serif;" +
    "cursor:pointer;box-shadow:0 2px 10px rgba(0,0,0,.25);display:inline-flex;align-items:center;gap:8px";
  var askSel = el("button", { type: "button", "class": "bookrag-ask-selection", "data-testid": "bookrag-ask-selection",
    "aria-label": "Ask the book about the selected text", hidden: "" }, "Ask about this");
  askSel.style.cssText = "position:absolute;z-index:2147483001;padding:6px 10px;border-radius:6px;border:0;" +
    "background:#2e6bd6;color:#fff;font:600 13px/1.2 system-ui,sans-serif;cursor:pointer;" +
    "box-shadow:0 2px 8px rgba(0,0,0,.25)";
  root.appendChild(launcher);
  applyTheme();

  // The launcher keeps clear of the page's fixed controls: above the back-to-top button (present while
  // hidden too, so the launcher does not jump when it appears), beside the table of contents' column.
  function overlaps(a, b) {
    return a.width && b.width && a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;
  }
  // A fixed control's layout box, its transform ignored: the theme scales back-to-top to 0 while hidden.
  function layoutBox(node) {
    if (getComputedStyle(node).position !== "fixed" || !node.offsetWidth) return node.getBoundingClientRect();
    var left = node.offsetLeft, top = node.offsetTop;
    return { left: left, top: top, right: left + node.offsetWidth, bottom: top + node.offsetHeight,
      width: node.offsetWidth, height: node.offsetHeight };
  }
  function placeLauncher() {
    var side = 20, bottom = 20, r, moved = true;
    launcher.style[LEFT ? "left" : "right"] = side + "px";
    launcher.style.bottom = bottom + "px";
    for (var round = 0; moved && round < 4; round++) {
      moved = false;
      AVOID.forEach(function (selector) {
        var nodes;
        try { nodes = document.querySelectorAll(selector); } catch (e) { return; }
        Array.prototype.forEach.call(nodes, function (node) {
          if (root.contains(node)) return;
          var box = layoutBox(node), me = launcher.getBoundingClientRect();
          if (!overlaps(me, box)) return;
          moved = true;
          var up = innerHeight - box.top + 12;  // above it
          var aside = LEFT ? box.right + 12 : innerWidth - box.left + 12;  // beside it, towards the page
          // A tall column (the table of contents): step aside; a small control: rise above it.
          if (box.height > innerHeight / 3 && aside < innerWidth / 2) {
            side = aside; launcher.style[LEFT ? "left" : "right"] = side + "px";
          } else {
            bottom = up; launcher.style.bottom = bottom + "px";
          }
        });
      });
    }
    r = launcher.getBoundingClientRect();
    launcher.setAttribute("data-placed", Math.round(r.left) + "," + Math.round(r.top));
  }
  var placing = false;
  function schedulePlace() {
    if (placing) return;
    placing = true;
    requestAnimationFrame(function () { placing = false; placeLauncher(); });
  }
  window.addEventListener("resize", schedulePlace);
  window.addEventListener("scroll", schedulePlace, { passive: true });
  new MutationObserver(schedulePlace).observe(document.body, { childList: true, subtree: true });
  if (document.readyState === "complete") placeLauncher(); else window.addEventListener("load", placeLauncher);
  placeLauncher();
  document.body.appendChild(root);
  document.body.appendChild(askSel);

  var panel = null, log, form, input, send, chip, status;
  var history = [], pending = null, busy = false, cssReady = null, suggestions = null;

  function loadCss() {
    if (cssReady) return cssReady;
    cssReady = new Promise(function (resolve) {
      var l = el("link", { rel: "stylesheet", href: CSS_URL });
      l.onload = l.onerror = function () { resolve(); };
      document.head.appendChild(l);
    });
    return cssReady;
  }

  function buildPanel() {
    panel = el("section", { id: "bookrag-panel", "class": "bookrag-panel", role: "dialog", "aria-modal": "false",
      "aria-labelledby": "bookrag-title", hidden: "" });
    var head = el("header", { "class": "bookrag-head" });
    head.appendChild(el("h2", { id: "bookrag-title" }, "Ask " + BOOK));
    var reset = el("button", { type: "button", "class": "bookrag-small", "aria-label": "Start a new conversation" }, "New");
    var close = el("button", { type: "button", "class": "bookrag-small bookrag-close", "aria-label": "Close the book assistant" });
    close.appendChild(icon("close", 14));
    reset.addEventListener("click", function () {
      history = []; log.textContent = ""; setPending(null); showSuggestions(); input.focus();
    });
    close.addEventListener("click", closePanel);
    head.appendChild(reset);
    head.appendChild(close);
    log = el("div", { "class": "bookrag-log", role: "log", "aria-live": "polite", "aria-label": "Conversation" });
    status = el("p", { "class": "bookrag-status", role: "status" });
    chip = el("div", { "class": "bookrag-chip", hidden: "" });
    form = el("form", { "class": "bookrag-form" });
    var label = el("label", { "for": "bookrag-q", "class": "bookrag-sr" }, "Your question about " + BOOK);
    input = el("textarea", { id: "bookrag-q", rows: "2", maxlength: String(MAX_QUESTION), "data-testid": "bookrag-input",
      placeholder: "Ask a question about " + BOOK + "…", "aria-describedby": "bookrag-hint" });
    var hint = el("span", { id: "bookrag-hint", "class": "bookrag-sr" }, "Enter sends; Shift+Enter starts a new line; Escape closes.");
    send = el("button", { type: "submit", "data-testid": "bookrag-send" }, "Ask");
    form.appendChild(label);
    form.appendChild(input);
    form.appendChild(hint);
    form.appendChild(send);
    panel.appendChild(head);
    panel.appendChild(log);
    panel.appendChild(status);
    panel.appendChild(chip);
    panel.appendChild(form);
    root.appendChild(panel);
    form.addEventListener("submit", function (e) { e.preventDefault(); submit(); });
    input.addEventListener("keydown", function (e) {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) { e.preventDefault(); submit(); }
    });
    panel.addEventListener("keydown", function (e) { if (e.key === "Escape") { e.preventDefault(); closePanel(); } });
  }

  function openPanel() {
    var asked = fetchSuggestions();  // with the stylesheet, not after it
    return loadCss().then(function () {
      if (!panel) buildPanel();
      panel.hidden = false;
      launcher.setAttribute("aria-expanded", "true");
      launcher.hidden = true;
      input.focus();
      asked.then(showSuggestions);
    });
  }

  // --- questions this page answers (found when the book was ingested, each answered from this page): fetched
  // once, on the panel's first opening, and shown while the conversation is empty. They sit in the log, which
  // has its size already, so nothing else in the panel moves when they arrive.
  function fetchSuggestions() {
    if (suggestions) return suggestions;
    var page = (ds.pageUrl || location.href.split("#")[0]).slice(0, 2000);
    var h = KEY ? { "X-API-Key": KEY } : {};
    suggestions = fetch(API + "/api/pages/suggestions?url=" + encodeURIComponent(page), { headers: h, mode: "cors",
      credentials: "omit" }).then(function (res) { return res.ok ? res.json() : null; })
      .then(function (body) { return body && body.suggestions ? body.suggestions.slice(0, 3) : []; },
        function () { return []; });  // no suggestions is the panel as it was: the reader can still ask
    return suggestions;
  }

  function showSuggestions() {
    if (!suggestions) return;
    suggestions.then(function (questions) {
      if (!questions.length || log.childNodes.length || busy) return;
      var box = el("div", { "class": "bookrag-suggestions", role: "group", "aria-label": "Questions this page answers",
        "data-testid": "bookrag-suggestions" });
      box.appendChild(el("p", { "class": "bookrag-suggestions-title" }, "This page answers:"));
      questions.forEach(function (question) {
        var b = box.appendChild(el("button", { type: "button", "class": "bookrag-suggestion",
          "data-testid": "bookrag-suggestion" }, question));
        b.addEventListener("click", function () {
          if (busy) return;
          box.remove();
          setPending(null);  // the page's question, not one about a selection
          input.value = question;
          submit();
        });
      });
      log.appendChild(box);
    });
  }

  function closePanel() {
    panel.hidden = true;
    launcher.hidden = false;
    launcher.setAttribute("aria-expanded", "false");
    launcher.focus();
  }

  launcher.addEventListener("click", openPanel);

  // --- "Ask about this": a selection on the page (outside the widget)
  function selectionText() {
    var sel = window.getSelection();
    if (!sel || sel.isCollapsed || !sel.rangeCount) return null;
    var range = sel.getRangeAt(0);
    if (root.contains(range.commonAncestorContainer)) return null;
    var text = sel.toString().replace(/\s+/g, " ").trim();
    return text.length >= 3 ? { text: text, rect: range.getBoundingClientRect() } : null;
  }

  function placeAskButton() {
    var found = selectionText();
    if (!found) { askSel.hidden = true; return; }
    askSel.hidden = false;
    askSel.style.top = Math.max(0, found.rect.top + window.scrollY - 38) + "px";
    askSel.style.left = Math.max(0, found.rect.left + window.scrollX) + "px";
    askSel._text = found.text;
  }
  // selectionchange: a touch long-press and its handles fire neither mouseup nor keyup. Settled first: a
  // drag fires it on every step.
  var settle = null;
  document.addEventListener("selectionchange", function () {
    clearTimeout(settle);
    settle = setTimeout(placeAskButton, 120);
  });
  document.addEventListener("mouseup", function (e) { if (e.target !== askSel) setTimeout(placeAskButton, 0); });
  document.addEventListener("keyup", function (e) { if (e.shiftKey || e.key === "Shift") placeAskButton(); });
  askSel.addEventListener("mousedown", function (e) { e.preventDefault(); }); // keep the selection
  askSel.addEventListener("pointerdown", function (e) { e.preventDefault(); });
  askSel.addEventListener("click", function () {
    var text = askSel._text;
    askSel.hidden = true;
    openPanel().then(function () { setPending(text); });
  });

  function setPending(text) {
    pending = text ? text.slice(0, MAX_SELECTION) : null;
    chip.textContent = "";
    chip.hidden = !pending;
    if (!pending) return;
    chip.appendChild(el("span", {}, "About: “" + (pending.length > 120 ? pending.slice(0, 117) + "…" : pending) + "”"));
    var drop = el("button", { type: "button", "class": "bookrag-small", "aria-label": "Do not ask about the selected text" }, "×");
    drop.addEventListener("click", function () { setPending(null); input.focus(); });
    chip.appendChild(drop);
    input.placeholder = "Ask about the selected text (or press Ask to have it explained)…";
  }

  // --- asking
  // The page's edition (issue 35): Docusaurus puts the locale in <html lang>, the docs version in a
  // docs-version-<name> class on <html>; data-locale and data-version override them.
  function edition() {
    var root = document.documentElement, m = /(?:^|\s)docs-version-(\S+)/.exec(root.className);
    return { locale: (ds.locale || root.lang).slice(0, 200), version: (ds.version || (m ? m[1] : "")).slice(0, 200) };
  }

  function submit() {
    if (busy) return;
    var question = input.value.trim();
    if (!question && pending) question = "Explain this passage.";
    if (!question) { showError(turnNode(""), { code: "INVALID_QUERY" }); return; }
    var body = { query: question.slice(0, MAX_QUESTION) };
    var page = edition();
    if (page.locale) body.locale = page.locale;
    if (page.version) body.version = page.version;
    var turns = history.slice(-MAX_TURNS);
    if (pending) {
      body.selected_text = pending;
      body.source_url = (ds.pageUrl || location.href.split("#")[0]).slice(0, 500);
    }
    if (turns.length) body.history = turns;
    while (body.history && JSON.stringify(body).length > MAX_BODY) {
      body.history.shift();
      if (!body.history.length) delete body.history;
    }
    input.value = "";
    setPending(null);
    input.placeholder = "Ask a follow-up question…";
    ask(body, turnNode(question));
  }

  function turnNode(question) {
    var offered = log.querySelector(".bookrag-suggestions");
    if (offered) offered.remove();  // asking something else: the conversation takes the log
    var turn = el("article", { "class": "bookrag-turn", "aria-label": "Question and answer" });
    if (question) turn.appendChild(el("p", { "class": "bookrag-question" }, question));
    log.appendChild(turn);
    return turn;
  }

  function setBusy(on, text) {
    busy = on;
    send.disabled = on;
    status.textContent = text || "";
    panel.setAttribute("aria-busy", on ? "true" : "false");
  }

  function headers() {
    var h = { "Content-Type": "application/json", "Accept": "text/event-stream, application/json" };
    if (KEY) h["X-API-Key"] = KEY;
    return h;
  }

  function ask(body, turn) {
    var answer = el("div", { "class": "bookrag-answer", "data-testid": "bookrag-answer", id: "bookrag-a" + (++uid) });
    turn.appendChild(answer);
    setBusy(true, "Searching " + BOOK + "…");
    var streaming = !!(window.ReadableStream && window.TextDecoder);
    var done = function (reply) { finish(turn, answer, body, reply.body, reply.queryId); };
    var failed = function (err) { setBusy(false); answer.remove(); showError(turn, err); };
    (streaming ? askStream(body, answer) : askWhole(body)).catch(function (err) {
      // The stream route is missing (an older service): the whole answer at once instead.
      if (err && err.fallback) return askWhole(body);
      throw err;
    }).then(done, failed);
  }

  function post(url, body) {
    return fetch(/^https?:/.test(url) ? url : API + url, { method: "POST", headers: headers(), body: JSON.stringify(body), mode: "cors",
      credentials: "omit" }).catch(function () { throw { code: "network" }; });
  }

  function errorFrom(res) {
    return res.json().catch(function () { return {}; }).then(function (b) {
      throw { code: b.code || (res.status >= 500 ? "unavailable" : "invalid"), status: res.status,
        retry: res.headers.get("Retry-After") };
    });
  }

  // A reply: the answer's body and its id in the question log (X-Query-Id; null when the log is off).
  function reply(res, body) { return { body: body, queryId: res.headers.get("X-Query-Id") }; }

  function askWhole(body) {
    return post("/api/answer", body).then(function (res) {
      return res.ok ? res.json().then(function (b) { return reply(res, b); }) : errorFrom(res);
    });
  }

  function askStream(body, answer) {
    return post(STREAM, body).then(function (res) {
      if (res.status === 404 || res.status === 405) throw { fallback: true };
      if (!res.ok) return errorFrom(res);
      if ((res.headers.get("Content-Type") || "").indexOf("text/event-stream") < 0) {
        return res.json().then(function (b) { return reply(res, b); });
      }
      var reader = res.body.getReader(), decoder = new TextDecoder(), buffer = "", text = "", final = null;
      function handle(block) {
        var kind = "message", data = "";
        block.split("\n").forEach(function (line) {
          if (line.indexOf("event:") === 0) kind = line.slice(6).trim();
          else if (line.indexOf("data:") === 0) data += line.slice(5).trim();
        });
        if (!data) return;
        var payload = JSON.parse(data);
        if (kind === "sources") setBusy(true, "Reading " + payload.sources.length + " sections…");
        else if (kind === "delta") {
          text += payload.text;
          renderMarkdown(answer, text, null);
          // How many pieces arrived before the final answer (the browser tests read it).
          answer.setAttribute("data-deltas", String(+(answer.getAttribute("data-deltas") || 0) + 1));
          answer.classList.add("bookrag-streaming");
          setBusy(true, "Answering…");
        } else if (kind === "final") final = payload;
        else if (kind === "error") throw { code: payload.code };
      }
      function pump() {
        return reader.read().then(function (r) {
          if (r.value) buffer += decoder.decode(r.value, { stream: true });
          var at;
          while ((at = buffer.indexOf("\n\n")) >= 0) {
            handle(buffer.slice(0, at));
            buffer = buffer.slice(at + 2);
          }
          if (!r.done) return pump();
          if (buffer.trim()) handle(buffer);
          if (!final) throw { code: "network" };
          return reply(res, final);
        }, function () { throw { code: "network" }; });
      }
      return pump();
    });
  }

  function finish(turn, answer, body, response, queryId) {
    setBusy(false);
    answer.classList.remove("bookrag-streaming");
    var sources = response.sources || [];
    if (response.is_refusal) {
      answer.classList.add("bookrag-refusal");
      answer.setAttribute("data-refusal", "true");
      renderText(answer, response.answer, null);
      if (sources.length) {
        var more = el("div", { "class": "bookrag-nearest" });
        more.appendChild(el("p", {}, "You may want to read:"));
        var ul = el("ul");
        sources.forEach(function (s) {
          var li = el("li");
          li.appendChild(el("a", { href: s.source_url, target: "_blank", rel: "noopener", "data-testid": "bookrag-nearest" },
            s.chapter + " › " + s.section));
          ul.appendChild(li);
        });
        more.appendChild(ul);
        answer.appendChild(more);
      }
    } else {
      var textNode = el("div", { "class": "bookrag-text" });
      renderMarkdown(textNode, response.answer, sources);
      answer.textContent = "";
      answer.setAttribute("data-refusal", "false");
      answer.appendChild(textNode);
      var ol = el("ol", { "class": "bookrag-sources", "aria-label": "Sources" });
      sources.forEach(function (s, i) {
        var li = el("li");
        li.appendChild(el("a", { href: link(s), target: "_blank", rel: "noopener", "data-testid": "bookrag-citation",
          "aria-label": "Source " + (i + 1) + ": " + s.chapter + ", " + s.section + " (opens the passage)" },
          s.chapter + " › " + s.section));
        ol.appendChild(li);
      });
      answer.appendChild(ol);
    }
    if (queryId) answer.appendChild(feedbackRow(queryId));
    history.push({ question: body.query, answer: response.answer.slice(0, MAX_ANSWER) });
    if (history.length > MAX_TURNS) history.shift();
    log.scrollTop = log.scrollHeight;
    input.focus();
  }

  // --- feedback: one vote per answer. Fixed sizes (CSS): a vote moves nothing; the comment opens below.
  function feedbackRow(queryId) {
    var row = el("div", { "class": "bookrag-feedback", role: "group", "aria-label": "Was this answer helpful?" });
    function btn(name, label) {
      var b = el("button", { type: "button", "class": "bookrag-vote", "data-testid": "bookrag-vote-" + name,
        "aria-label": label, "aria-pressed": "false" });
      b.appendChild(icon(name, 16));
      return row.appendChild(b);
    }
    var up = btn("up", "This answer helped"), down = btn("down", "This answer did not help");
    var note = row.appendChild(el("span", { "class": "bookrag-vote-note", role: "status" }));
    function lock(chosen) { up.disabled = down.disabled = true; chosen.setAttribute("aria-pressed", "true"); }
    function vote(rating, comment, sentText) {
      var failed = function () { note.textContent = "Your feedback could not be sent."; };
      note.textContent = "Sending…";
      return post("/api/feedback", comment ? { query_id: queryId, rating: rating, comment: comment.slice(0, MAX_COMMENT) }
        : { query_id: queryId, rating: rating }).then(function (res) {
        if (res.ok || res.status === 409) note.textContent = sentText; else failed();
      }, failed);
    }
    up.addEventListener("click", function () { lock(up); vote("up", null, "Thanks for your feedback."); });
    down.addEventListener("click", function () {
      lock(down);
      // The vote is sent now, so a comment box closed unsent loses nothing; a comment joins it later.
      var given = vote("down", null, "Thanks. Tell us what was wrong, then Send (optional).");
      var form = el("form", { "class": "bookrag-comment" }), id = "bookrag-c" + (++uid);
      form.appendChild(el("label", { "for": id, "class": "bookrag-sr" }, "What was wrong or missing? (optional)"));
      var box = form.appendChild(el("textarea", { id: id, rows: "2", maxlength: String(MAX_COMMENT),
        "data-testid": "bookrag-comment-input", placeholder: "What was wrong or missing? (optional)" }));
      var go = form.appendChild(el("button", { type: "submit", "class": "bookrag-small" }, "Send"));
      form.addEventListener("submit", function (e) {
        e.preventDefault();
        var comment = box.value.trim();
        box.disabled = go.disabled = true;
        if (!comment) { note.textContent = "Thanks for your feedback."; return; }
        given.then(function () { vote("down", comment, "Thanks for your feedback."); });
      });
      row.parentNode.insertBefore(form, row.nextSibling);
      box.focus();
    });
    return row;
  }

  function showError(turn, err) {
    var code = (err && err.code) || "other";
    var message = MESSAGES[code];
    if (!message) {
      message = err && err.status >= 500 ? MESSAGES.unavailable : err && err.status >= 400 ? MESSAGES.invalid : MESSAGES.other;
    }
    var seconds = err && err.retry ? err.retry + " second" + (err.retry === "1" ? "" : "s") : "a minute";
    var box = el("p", { "class": "bookrag-error", role: "alert", "data-testid": "bookrag-error", "data-code": code },
      message.replace("{s}", seconds));
    turn.appendChild(box);
    log.scrollTop = log.scrollHeight;
  }
})();
