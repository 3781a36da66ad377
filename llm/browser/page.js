// page.js is what ptk runs in a chat page, in a world of its own (an
// isolated world: the page's scripts cannot see it, nor change the DOM
// methods it calls). It is one function: op names what to do, cfg holds the
// site's selectors and limits, arg the operation's argument.
(function (op, cfg, arg) {
  "use strict";
  const all = (sel) => (sel ? Array.from(document.querySelectorAll(sel)) : []);
  const shown = (el) => {
    if (!el || !el.isConnected) return false;
    if (typeof el.checkVisibility === "function") return el.checkVisibility({ visibilityProperty: true });
    return el.getClientRects().length > 0;
  };
  const firstShown = (sel) => all(sel).find(shown) || null;
  const clip = (s, n) => (s.length > n ? s.slice(0, n) : s);
  const isField = (el) => !el.isContentEditable && (el instanceof HTMLTextAreaElement || el instanceof HTMLInputElement);

  // readAnswer reads an answer's text without its excluded parts.
  function readAnswer(el) {
    if (cfg.read === "textContent") {
      const copy = el.cloneNode(true);
      if (cfg.selectors.exclude) copy.querySelectorAll(cfg.selectors.exclude).forEach((x) => x.remove());
      return copy.textContent;
    }
    if (!cfg.selectors.exclude || !el.querySelector(cfg.selectors.exclude)) return el.innerText;
    return innerTextWithout(el, cfg.selectors.exclude);
  }

  // innerTextWithout is el.innerText as if the elements that match exclude
  // were not there. It follows the innerText algorithm (required line
  // breaks of block boxes and paragraphs, <br>, table cells and rows, CSS
  // white-space, display and visibility) from the computed styles alone:
  // hiding the parts and asking the browser would lay the page out again
  // twice a reading, which costs a long answer hundreds of milliseconds.
  function innerTextWithout(root, exclude) {
    const parts = []; // the text, in pieces
    let pending = 0; // required line breaks before the next text
    let softEnd = false; // the last piece ends with a collapsible space
    let edge = true; // the text so far ends at the start of a line or a cell
    const trimSoft = () => {
      if (softEnd) parts[parts.length - 1] = parts[parts.length - 1].slice(0, -1);
      softEnd = false;
    };
    // add appends a piece of text: collapsible (white space already
    // collapsed) or not.
    const add = (text, collapsible) => {
      if (collapsible) {
        if (text.charCodeAt(0) === 32 && (edge || pending > 0 || softEnd)) text = text.slice(1);
        if (text === "") return;
      }
      if (pending > 0 && parts.length > 0) {
        trimSoft();
        parts.push("\n".repeat(pending));
        edge = true;
      }
      pending = 0;
      if (!collapsible && (text === "\n" || text === "\t")) trimSoft();
      parts.push(text);
      softEnd = collapsible && text.charCodeAt(text.length - 1) === 32;
      edge = text === "\t" || text.charCodeAt(text.length - 1) === 10;
    };
    const walk = (node, ws, visible) => {
      for (let n = node.firstChild; n !== null; n = n.nextSibling) {
        if (n.nodeType === 3) {
          if (!visible) continue;
          const t = n.data;
          if (ws === "pre" || ws === "pre-wrap" || ws === "break-spaces") add(t, false);
          else if (ws === "pre-line") add(t.replace(/[ \t\f\r]+/g, " ").replace(/ ?\n ?/g, "\n"), true);
          else add(t.replace(/[ \t\n\f\r]+/g, " "), true);
          continue;
        }
        if (n.nodeType !== 1 || n.matches(exclude)) continue;
        const tag = n.localName;
        if (tag === "script" || tag === "style" || tag === "template" || tag === "textarea" || tag === "input" || tag === "select") continue;
        const cs = getComputedStyle(n);
        const d = cs.display;
        if (d === "none") continue;
        const vis = cs.visibility === "visible";
        if (tag === "br") {
          if (vis) add("\n", false);
          continue;
        }
        let req = 0;
        if (tag === "p") req = 2;
        else if (d === "table-row" || d === "table-caption" || !(d.startsWith("inline") || d === "contents" || d.startsWith("table") || d.startsWith("ruby"))) req = 1;
        if (req > pending) pending = req;
        walk(n, cs.whiteSpace, vis);
        if (d === "table-cell") {
          let next = n.nextElementSibling;
          while (next && getComputedStyle(next).display === "none") next = next.nextElementSibling;
          if (next && getComputedStyle(next).display === "table-cell") add("\t", false);
        }
        if (req > pending) pending = req;
      }
    };
    const rcs = getComputedStyle(root);
    walk(root, rcs.whiteSpace, rcs.visibility === "visible");
    trimSoft();
    return parts.join("");
  }

  function setValue(el, text) {
    if (isField(el)) {
      // What the page would let a person type: no more than its maxlength.
      if (el.maxLength >= 0 && text.length > el.maxLength) text = text.slice(0, el.maxLength);
      const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
      Object.getOwnPropertyDescriptor(proto, "value").set.call(el, text);
    } else {
      el.textContent = text;
    }
    el.dispatchEvent(new Event("input", { bubbles: true }));
  }

  switch (op) {
    case "check": {
      // Selectors the browser cannot parse: a broken site file.
      const bad = [];
      for (const [name, sel] of Object.entries(cfg.selectors)) {
        if (!sel) continue;
        try {
          document.querySelector(sel);
        } catch (e) {
          bad.push(name + " " + JSON.stringify(sel) + ": " + e.message);
        }
      }
      return bad;
    }
    case "arm": {
      // From now on, remember a busy indicator that is shown even for less
      // than a reading's interval.
      const seen = (globalThis.ptkBusy = { seen: !!firstShown(cfg.selectors.busy) });
      if (globalThis.ptkObserver) globalThis.ptkObserver.disconnect();
      if (cfg.selectors.busy) {
        globalThis.ptkObserver = new MutationObserver(() => {
          if (!seen.seen && firstShown(cfg.selectors.busy)) seen.seen = true;
        });
        globalThis.ptkObserver.observe(document, { subtree: true, childList: true, attributes: true });
      }
      return true;
    }
    case "disarm": {
      if (globalThis.ptkObserver) globalThis.ptkObserver.disconnect();
      globalThis.ptkObserver = null;
      return true;
    }
    case "state": {
      const answers = all(cfg.selectors.answer);
      const last = answers.length ? answers[answers.length - 1] : null;
      const errors = all(cfg.selectors.error)
        .filter(shown)
        .map((e) => e.innerText.trim())
        .filter(Boolean);
      return {
        ready: document.readyState,
        input: !!firstShown(cfg.selectors.input),
        loggedOut: !!firstShown(cfg.selectors.logged_out),
        busy: !!firstShown(cfg.selectors.busy),
        busySeen: !!(globalThis.ptkBusy && globalThis.ptkBusy.seen),
        count: answers.length,
        text: last ? clip(readAnswer(last), cfg.max + 1) : "",
        error: clip(errors.join("\n"), 2000),
      };
    }
    case "focus": {
      // Focus the input, empty, with the caret in it.
      const el = firstShown(cfg.selectors.input);
      if (!el) return "none";
      el.focus();
      if (isField(el)) {
        if (el.value !== "") setValue(el, "");
        el.setSelectionRange(0, 0);
        return "field";
      }
      if (!el.isContentEditable) return "other";
      const sel = window.getSelection();
      const range = document.createRange();
      range.selectNodeContents(el);
      sel.removeAllRanges();
      sel.addRange(range);
      if (el.textContent !== "") document.execCommand("delete");
      range.selectNodeContents(el);
      range.collapse(false);
      sel.removeAllRanges();
      sel.addRange(range);
      return "editable";
    }
    case "read": {
      // The text the input holds now.
      const el = firstShown(cfg.selectors.input);
      if (!el) return null;
      return isField(el) ? String(el.value) : el.innerText;
    }
    case "paste": {
      const el = firstShown(cfg.selectors.input);
      if (!el) return false;
      const data = new DataTransfer();
      data.setData("text/plain", arg);
      el.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
      return true;
    }
    case "value": {
      const el = firstShown(cfg.selectors.input);
      if (!el) return false;
      setValue(el, arg);
      return true;
    }
    case "send": {
      const b = firstShown(cfg.selectors.send);
      if (!b) return "none";
      if (b.disabled || b.getAttribute("aria-disabled") === "true") return "disabled";
      b.click();
      return "clicked";
    }
    case "newChat": {
      const b = firstShown(cfg.selectors.new_chat);
      if (!b) return false;
      b.click();
      return true;
    }
  }
  throw new Error("page.js: no operation " + op);
})
