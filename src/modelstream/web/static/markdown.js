// Markdown for the package's pages: the playground's answers and the trace viewer's text items.
//
// Written here by hand rather than taken from a library: the pages load nothing from elsewhere
// and must work offline under their strict Content-Security-Policy (scripts and styles from
// their own origin only, nothing inline), and a library would have to be vendored, audited and
// kept up to date. It reads the part of CommonMark (with GitHub's tables and strikethrough) that
// models write: headings, emphasis, lists, block quotes, rules, links, inline code, fenced code
// blocks (with their language and a Copy button) and tables.
//
// Safe by construction: it builds elements with createElement and puts every piece of text in
// as a text node, never parsing a string as HTML, so raw HTML in a model's text (a script tag,
// an img with an onerror) shows as the characters it is. A link keeps only an http:, https: or
// mailto: target and opens with rel="noopener noreferrer"; any other link shows as its Markdown
// source. An image (![alt](url)) shows as a link to it: the pages load no image a model names.
//
// One global, `Markdown`. `Markdown.render(container, text)` shows `text` in `container`, which
// it owns. Called again as the text grows (a streamed answer), it rebuilds only the top-level
// blocks whose source changed, so the answer redraws without flicker and a finished code block
// keeps its Copy button; an unclosed code fence (mid-stream) shows as an open code block.
"use strict";

const Markdown = (() => {
  const MAX_DEPTH = 12; // block quotes and lists nested deeper show as paragraphs
  const MAX_INLINE_DEPTH = 12; // emphasis and links nested deeper show as text
  const MAX_DESTINATION = 2048; // characters of a link target
  const MAX_TITLE = 300; // characters of a link title
  const LINK_SCHEMES = ["http:", "https:", "mailto:"];
  const COPIED_MS = 1800;

  // --- blocks --------------------------------------------------------------------------------

  const FENCE = /^( {0,3})(`{3,}|~{3,})[ \t]*(.*)$/;
  const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
  const HEADING = /^ {0,3}(#{1,6})(?:[ \t]|$)/;
  const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
  const QUOTE = /^ {0,3}>[ \t]?(.*)$/;
  const ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])(?:([ \t]+)(.*))?$/;
  // each pipe opens a cell, so no two runs of spaces can trade characters (no backtracking)
  const TABLE_RULE = /^[ \t]*(?:\|[ \t]*)?:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*(?:\|[ \t]*)?$/;

  const blank = (line) => /^[ \t]*$/.test(line);

  // Columns of leading white space, a tab reaching the next multiple of 4.
  function indentOf(line) {
    let columns = 0;
    for (let i = 0; i < line.length; i += 1) {
      if (line[i] === " ") columns += 1;
      else if (line[i] === "\t") columns += 4 - (columns % 4);
      else break;
    }
    return columns;
  }

  function dropIndent(line, columns) {
    let taken = 0;
    let i = 0;
    while (i < line.length && taken < columns) {
      if (line[i] === " ") taken += 1;
      else if (line[i] === "\t") taken += 4 - (taken % 4);
      else break;
      i += 1;
    }
    return line.slice(i);
  }

  function fenceOf(line) {
    const found = FENCE.exec(line);
    // a backtick fence's info string has no backtick: "```a```" is inline code
    return found && !(found[2][0] === "`" && found[3].includes("`")) ? found : null;
  }

  function headingOf(line) {
    const found = HEADING.exec(line);
    if (!found) return null;
    let text = line.slice(found[0].length).trim();
    let end = text.length; // a closing run of #s, after a space, is not part of the text
    while (end > 0 && text[end - 1] === "#") end -= 1;
    if (end === 0 || text[end - 1] === " " || text[end - 1] === "\t") text = text.slice(0, end).trim();
    return { type: "heading", level: found[1].length, text };
  }

  function listItem(line) {
    const found = ITEM.exec(line);
    if (!found) return null;
    const indent = indentOf(found[1]);
    const marker = found[2];
    const ordered = marker.length > 1;
    const gap = found[3] ? Math.min(indentOf(found[3]), 4) : 1;
    return {
      indent,
      ordered,
      number: ordered ? parseInt(marker, 10) : 1,
      content: indent + marker.length + gap, // where the item's own lines start
      text: found[4] || "",
    };
  }

  function cells(line) {
    let text = line.trim();
    if (text.startsWith("|")) text = text.slice(1);
    if (text.endsWith("|") && !text.endsWith("\\|")) text = text.slice(0, -1);
    const found = [];
    let cell = "";
    for (let i = 0; i < text.length; i += 1) {
      if (text[i] === "\\" && text[i + 1] === "|") {
        cell += "|";
        i += 1;
      } else if (text[i] === "|") {
        found.push(cell.trim());
        cell = "";
      } else {
        cell += text[i];
      }
    }
    found.push(cell.trim());
    return found;
  }

  function tableStarts(lines, i) {
    return (
      i + 1 < lines.length &&
      lines[i].includes("|") &&
      TABLE_RULE.test(lines[i + 1]) &&
      cells(lines[i]).length === cells(lines[i + 1]).length
    );
  }

  // Whether line i starts a block that ends the paragraph above it.
  function interrupts(lines, i) {
    const line = lines[i];
    if (fenceOf(line) || headingOf(line) || RULE.test(line) || QUOTE.test(line)) return true;
    const item = listItem(line);
    if (item && item.text.trim() && (!item.ordered || item.number === 1)) return true;
    return tableStarts(lines, i);
  }

  function parseBlocks(lines, depth) {
    const blocks = [];
    let i = 0;
    while (i < lines.length) {
      if (blank(lines[i])) {
        i += 1;
        continue;
      }
      const { block, end } = parseBlock(lines, i, depth);
      blocks.push(block);
      i = end;
    }
    return blocks;
  }

  // The block starting at the non-blank line i, and the index of the line after it.
  function parseBlock(lines, i, depth) {
    const line = lines[i];
    const fence = fenceOf(line);
    if (fence) return codeBlock(lines, i, fence);
    const heading = headingOf(line);
    if (heading) return { block: heading, end: i + 1 };
    if (RULE.test(line)) return { block: { type: "rule" }, end: i + 1 };
    if (depth < MAX_DEPTH && QUOTE.test(line)) return quote(lines, i, depth);
    if (depth < MAX_DEPTH && listItem(line)) return list(lines, i, depth);
    if (tableStarts(lines, i)) return table(lines, i);
    return paragraph(lines, i);
  }

  function codeBlock(lines, i, fence) {
    const [, indent, marks, info] = fence;
    const body = [];
    let j = i + 1;
    let closed = false;
    for (; j < lines.length; j += 1) {
      const close = CLOSING_FENCE.exec(lines[j]);
      if (close && close[1][0] === marks[0] && close[1].length >= marks.length) {
        closed = true;
        j += 1;
        break;
      }
      body.push(dropIndent(lines[j], indent.length));
    }
    if (!closed && body.length && blank(body[body.length - 1])) body.pop(); // the line to come
    const lang = info.trim().split(/[ \t]/)[0];
    return { block: { type: "code", lang, text: body.join("\n"), closed }, end: j };
  }

  function quote(lines, i, depth) {
    const inner = [];
    let j = i;
    for (; j < lines.length; j += 1) {
      const found = QUOTE.exec(lines[j]);
      if (found) inner.push(found[1]);
      else if (!blank(lines[j]) && !blank(inner[inner.length - 1]) && !interrupts(lines, j)) {
        inner.push(lines[j]); // a paragraph's next line, written without its ">"
      } else break;
    }
    return { block: { type: "quote", blocks: parseBlocks(inner, depth + 1) }, end: j };
  }

  // A list: items of one kind (bullets or numbers). An item owns the lines indented past its
  // marker (a nested list, a code block), parsed as blocks of their own.
  function list(lines, i, depth) {
    const first = listItem(lines[i]);
    const items = [];
    let loose = false;
    let item = first;
    let j = i;
    for (;;) {
      const body = [item.text];
      const nested = Math.min(item.content, item.indent + 2); // "1. a\n  - b": b is inside a
      let k = j + 1;
      for (; k < lines.length; k += 1) {
        const line = lines[k];
        if (blank(line)) body.push("");
        else if (indentOf(line) >= nested) body.push(dropIndent(line, item.content));
        else if (!blank(lines[k - 1]) && !interrupts(lines, k) && !listItem(line)) body.push(line);
        else break;
      }
      let trailing = 0;
      while (body.length > 1 && body[body.length - 1] === "") {
        body.pop();
        trailing += 1;
      }
      items.push(parseBlocks(body, depth + 1));
      const next = k < lines.length ? listItem(lines[k]) : null;
      if (!next || next.ordered !== first.ordered) {
        const block = { type: "list", ordered: first.ordered, start: first.number, items, loose };
        return { block, end: k - trailing };
      }
      if (trailing) loose = true;
      item = next;
      j = k;
    }
  }

  function table(lines, i) {
    const head = cells(lines[i]);
    const align = cells(lines[i + 1]).map((cell) => {
      if (cell.endsWith(":")) return cell.startsWith(":") ? "center" : "right";
      return cell.startsWith(":") ? "left" : "";
    });
    const rows = [];
    let j = i + 2;
    while (j < lines.length && !blank(lines[j]) && lines[j].includes("|") && !interrupts(lines, j)) {
      rows.push(cells(lines[j]));
      j += 1;
    }
    return { block: { type: "table", head, align, rows }, end: j };
  }

  function paragraph(lines, i) {
    const text = [lines[i].trim()];
    let j = i + 1;
    while (j < lines.length && !blank(lines[j]) && !interrupts(lines, j)) {
      text.push(lines[j].trim());
      j += 1;
    }
    return { block: { type: "paragraph", text: text.join("\n") }, end: j };
  }

  // --- inline ---------------------------------------------------------------------------------

  const PUNCTUATION = /[!-\/:-@[-`{-~]/;
  const UNICODE_PUNCTUATION = /[\p{P}\p{S}]/u;
  const SPACE = /\s/;
  const WORD = /[\p{L}\p{N}_]/u;
  const SPECIAL = new Set(["\\", "`", "*", "_", "~", "[", "!", "<", "h", "H"]);
  const AUTOLINK = /<((?:https?:\/\/|mailto:)[^\s<>]*)>/iy;
  const BARE_URL = /https?:\/\/[^\s<>]+/iy;
  const ESCAPED = /\\([!-\/:-@[-`{-~])/g;

  function runLength(text, at, limit) {
    let end = at;
    while (end < limit && text[end] === text[at]) end += 1;
    return end - at;
  }

  // The first index of `sorted` whose value is at least `value`.
  function lowerBound(sorted, value, of = (x) => x) {
    let low = 0;
    let high = sorted.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (of(sorted[middle]) < value) low = middle + 1;
      else high = middle;
    }
    return low;
  }

  // Which closing runs can end emphasis that opened with `size` characters: a run of two ends
  // strong emphasis only, so "*a **b** c*" is one emphasis around a strong one.
  function closes(size, length) {
    if (size === 1) return length === 1 || length >= 3;
    return length >= size;
  }

  // The inline Markdown of one block's text. Code spans, delimiter runs (* _ ~) and bracket
  // pairs are found once up front, and each closing delimiter is then found by a binary search:
  // no character is looked at more than a few times, whatever a model writes (10,000 asterisks).
  class Inline {
    constructor(text) {
      this.text = text;
      this.codeEnd = new Map(); // start of a code span -> the index after it
      this.bracketEnd = new Map(); // index of "[" -> index of its "]"
      this.runs = { "*": [], _: [], "~": [] }; // delimiter runs in order: {at, length, canOpen, canClose}
      this.runAt = new Map(); // start of a delimiter run -> the run
      this.tables = new Map(); // characters -> where the next of them is (nextOf)
      this.opens = null; // "(" before each index (opensBefore)
      this.scan();
      this.nextCloser = {}; // "*1" -> for each run index, the index of the next run that closes
      for (const [char, runs] of Object.entries(this.runs)) {
        for (const size of char === "~" ? [2] : [1, 2, 3]) {
          const next = new Array(runs.length + 1).fill(-1);
          for (let n = runs.length - 1; n >= 0; n -= 1) {
            next[n] = runs[n].canClose && closes(size, runs[n].length) ? n : next[n + 1];
          }
          this.nextCloser[char + size] = next;
        }
      }
    }

    scan() {
      const text = this.text;
      const ticks = new Map(); // run length -> starts of the backtick runs of that length
      for (let i = text.indexOf("`"); i >= 0; i = text.indexOf("`", i)) {
        const length = runLength(text, i, text.length);
        if (!ticks.has(length)) ticks.set(length, []);
        ticks.get(length).push(i);
        i += length;
      }
      const open = []; // "[" not yet closed
      for (let i = 0; i < text.length; ) {
        const char = text[i];
        if (char === "\\" && PUNCTUATION.test(text[i + 1] || "")) {
          i += 2;
        } else if (char === "`") {
          const length = runLength(text, i, text.length);
          const starts = ticks.get(length) || []; // none when a backslash split the run
          const close = starts[lowerBound(starts, i + length)];
          if (close !== undefined) this.codeEnd.set(i, close + length);
          i = close !== undefined ? close + length : i + length;
        } else if (char === "*" || char === "_" || char === "~") {
          const length = runLength(text, i, text.length);
          const run = { at: i, length, ...flanking(char, text[i - 1], text[i + length]) };
          this.runs[char].push(run);
          this.runAt.set(i, run);
          i += length;
        } else {
          if (char === "[") open.push(i);
          else if (char === "]" && open.length) this.bracketEnd.set(open.pop(), i);
          i += 1;
        }
      }
    }

    // The run closing emphasis of `char` opened with `size` characters, the first one starting
    // in [from, to): {at, length} with length counted up to `to`; null when there is none.
    closer(char, size, from, to) {
      const runs = this.runs[char];
      const first = lowerBound(runs, from, (run) => run.at);
      const found = this.nextCloser[char + size][first];
      if (found >= 0 && runs[found].at + runs[found].length <= to) return runs[found];
      // the one run that crosses `to` (the closer of an outer emphasis) counts up to it
      const last = lowerBound(runs, to, (run) => run.at) - 1;
      const cut = runs[last];
      if (last >= first && cut && cut.at + cut.length > to && cut.canClose) {
        const length = to - cut.at;
        if (closes(size, length)) return { at: cut.at, length };
      }
      return null;
    }

    // Appends the nodes of text[from, to) to `target`.
    parse(target, from, to, depth, links) {
      const text = this.text;
      let buffer = "";
      let plain = from; // where the text not yet in `buffer` starts
      const put = (node) => {
        if (buffer) target.append(buffer);
        buffer = "";
        target.append(node);
      };
      let i = from;
      while (i < to) {
        const char = text[i];
        if (!SPECIAL.has(char)) {
          i += 1;
          continue;
        }
        buffer += text.slice(plain, i);
        plain = i;
        const next = this.special(char, i, to, depth, links, put, (more) => {
          buffer += more;
        });
        if (next > i) {
          i = next;
          plain = next;
        } else {
          i += 1;
        }
      }
      buffer += text.slice(plain, to);
      if (buffer) target.append(buffer);
    }

    // What starts at i with `char`: puts its node (or literal text) and returns where the plain
    // text goes on, or returns i when `char` is just a character here.
    special(char, i, to, depth, links, put, literal) {
      const text = this.text;
      if (char === "\\") {
        if (i + 1 < to && PUNCTUATION.test(text[i + 1])) {
          literal(text[i + 1]);
          return i + 2;
        }
        return i;
      }
      if (char === "`") {
        const end = this.codeEnd.get(i);
        const length = runLength(text, i, to);
        if (end === undefined || end > to) {
          literal(text.slice(i, i + length));
          return i + length;
        }
        put(make("code", "", codeText(text.slice(i + length, end - length))));
        return end;
      }
      if (depth >= MAX_INLINE_DEPTH) return i;
      if (char === "*" || char === "_" || char === "~") return this.emphasis(char, i, to, depth, links, put, literal);
      if (!links) return i;
      if (char === "[") return this.link(i, i, to, depth, put, literal);
      if (char === "!") return text[i + 1] === "[" ? this.link(i, i + 1, to, depth, put, literal) : i;
      if (char === "<") {
        AUTOLINK.lastIndex = i;
        const found = AUTOLINK.exec(text);
        if (!found || AUTOLINK.lastIndex > to) return i;
        const node = anchor(found[1], null);
        if (!node) return i;
        node.textContent = found[1];
        put(node);
        return AUTOLINK.lastIndex;
      }
      // "h": a bare web address, not inside a word
      if (i > 0 && WORD.test(text[i - 1])) return i;
      BARE_URL.lastIndex = i;
      const found = BARE_URL.exec(text);
      if (!found) return i;
      const url = trimUrl(found[0].slice(0, to - i));
      const node = url.length > 8 ? anchor(url, null) : null;
      if (!node) return i;
      node.textContent = url;
      put(node);
      return i + url.length;
    }

    emphasis(char, i, to, depth, links, put, literal) {
      const text = this.text;
      const run = this.runAt.get(i);
      const length = Math.min(run ? run.length : 1, to - i);
      const sizes = !run || !run.canOpen ? [] : char === "~" ? (length >= 2 ? [2] : []) : [3, 2, 1].filter((size) => size <= length);
      for (const size of sizes) {
        const open = i + length - size; // the opener is the run's last characters
        const closer = this.closer(char, size, open + size, to);
        if (!closer) continue;
        const end = closer.at + Math.min(closer.length, to - closer.at);
        const inner = [open + size, end - size]; // the closer is its run's last characters
        literal(text.slice(i, open));
        let node;
        if (char === "~") node = make("del");
        else if (size === 3) node = make("em");
        else node = make(size === 2 ? "strong" : "em");
        let into = node;
        if (size === 3) {
          into = make("strong");
          node.append(into);
        }
        this.parse(into, inner[0], inner[1], depth + 1, links);
        put(node);
        return end;
      }
      literal(text.slice(i, i + length));
      return i + length;
    }

    // [label](target "title") at `bracket` (`start` is the "!" of an image, else `bracket`).
    link(start, bracket, to, depth, put, literal) {
      const text = this.text;
      const close = this.bracketEnd.get(bracket);
      if (close === undefined || close + 1 >= to || text[close + 1] !== "(") return start;
      const target = this.destination(close + 2, to);
      if (!target) return start;
      const node = anchor(target.href, target.title);
      if (!node) {
        literal(text.slice(start, target.end)); // a target the page does not link: its source
        return target.end;
      }
      this.parse(node, bracket + 1, close, depth + 1, false);
      put(node);
      return target.end;
    }

    // The index of the first character at or after `at` that is one of `chars` (the text's
    // length when none): a table made once per text, so link targets are found in constant
    // time however many "[a](" a text holds.
    nextOf(chars, at) {
      let table = this.tables.get(chars);
      if (!table) {
        const text = this.text;
        table = new Int32Array(text.length + 1);
        table[text.length] = text.length;
        for (let i = text.length - 1; i >= 0; i -= 1) table[i] = chars.includes(text[i]) ? i : table[i + 1];
        this.tables.set(chars, table);
      }
      return table[Math.min(at, this.text.length)];
    }

    // "(" before `at`, counted once per text.
    opensBefore(at) {
      if (!this.opens) {
        this.opens = new Int32Array(this.text.length + 1);
        for (let i = 0; i < this.text.length; i += 1) this.opens[i + 1] = this.opens[i] + (this.text[i] === "(" ? 1 : 0);
      }
      return this.opens[at];
    }

    // A link's (target "title") from just after its "(": {href, title, end}, or null.
    destination(at, to) {
      const text = this.text;
      const spaces = (p) => {
        while (p < to && (text[p] === " " || text[p] === "\t" || text[p] === "\n")) p += 1;
        return p;
      };
      let p = spaces(at);
      let href;
      if (text[p] === "<") {
        const close = this.nextOf(">\n", p + 1);
        if (close >= to || close - p > MAX_DESTINATION || text[close] !== ">") return null;
        href = text.slice(p + 1, close);
        p = close + 1;
      } else {
        // up to white space, or the ")" that no "(" inside the target opened
        const start = p;
        const limit = Math.min(to, start + MAX_DESTINATION);
        let closed = 0; // ")" that closed a "(" of the target
        for (;;) {
          p = Math.min(this.nextOf(" \t\n\r\f\v)", p), limit);
          const unclosed = this.opensBefore(p) - this.opensBefore(start) - closed;
          if (p >= limit || text[p] !== ")" || unclosed <= 0) break;
          closed += 1;
          p += 1;
        }
        href = text.slice(start, p);
      }
      p = spaces(p);
      let title = null;
      const quoteChar = text[p];
      if (p < to && (quoteChar === '"' || quoteChar === "'" || quoteChar === "(")) {
        const closing = quoteChar === "(" ? ")" : quoteChar;
        let q = p + 1;
        while (q < to && q - p < MAX_TITLE && text[q] !== closing) q += text[q] === "\\" ? 2 : 1;
        if (q >= to || text[q] !== closing) return null;
        title = text.slice(p + 1, q).replace(ESCAPED, "$1");
        p = spaces(q + 1);
      }
      if (p >= to || text[p] !== ")") return null;
      return { href: href.replace(ESCAPED, "$1"), title, end: p + 1 };
    }
  }

  // CommonMark's flanking rules, which tell "2 * 3 * 4" from "*emphasis*" and snake_case words
  // from _emphasis_.
  function flanking(char, before = " ", after = " ") {
    const spaceBefore = SPACE.test(before);
    const spaceAfter = SPACE.test(after);
    const punctBefore = UNICODE_PUNCTUATION.test(before);
    const punctAfter = UNICODE_PUNCTUATION.test(after);
    const left = !spaceAfter && (!punctAfter || spaceBefore || punctBefore);
    const right = !spaceBefore && (!punctBefore || spaceAfter || punctAfter);
    if (char === "_") {
      return { canOpen: left && (!right || punctBefore), canClose: right && (!left || punctAfter) };
    }
    return { canOpen: left, canClose: right };
  }

  function codeText(raw) {
    const text = raw.replace(/\n/g, " ");
    const padded = text.length > 2 && text.startsWith(" ") && text.endsWith(" ") && text.trim();
    return padded ? text.slice(1, -1) : text;
  }

  // A web address written in prose ends before the punctuation that follows it.
  function trimUrl(url) {
    let end = url.length;
    for (;;) {
      const last = url[end - 1];
      if (".,:;!?\"'*_~".includes(last)) end -= 1;
      else if (last === ")") {
        const part = url.slice(0, end);
        if (part.split("(").length >= part.split(")").length) break;
        end -= 1;
      } else break;
    }
    return url.slice(0, end);
  }

  // A link to `href` if its scheme is one the pages follow, else null.
  function anchor(href, title) {
    const target = href.trim();
    if (!/^(?:https?:\/\/|mailto:)/i.test(target)) return null;
    let url;
    try {
      url = new URL(target);
    } catch {
      return null;
    }
    if (!LINK_SCHEMES.includes(url.protocol)) return null;
    const node = make("a");
    node.href = url.href;
    node.rel = "noopener noreferrer";
    node.target = "_blank";
    if (title) node.title = title;
    return node;
  }

  // --- nodes ----------------------------------------------------------------------------------

  function make(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function inlineInto(node, text) {
    new Inline(text).parse(node, 0, text.length, 0, true);
    return node;
  }

  function blocksInto(node, blocks) {
    for (const block of blocks) node.append(blockNode(block));
    return node;
  }

  function blockNode(block) {
    switch (block.type) {
      case "paragraph":
        return inlineInto(make("p"), block.text);
      case "heading":
        return inlineInto(make(`h${block.level}`), block.text);
      case "rule":
        return make("hr");
      case "quote":
        return blocksInto(make("blockquote"), block.blocks);
      case "list": {
        const list = make(block.ordered ? "ol" : "ul", block.loose ? "loose" : "");
        if (block.ordered && block.start !== 1) list.start = block.start;
        for (const item of block.items) list.append(blocksInto(make("li"), item));
        return list;
      }
      case "table":
        return tableNode(block);
      default:
        return codeNode(block);
    }
  }

  function tableNode(block) {
    const cell = (tag, text, align) => inlineInto(make(tag, align ? `align-${align}` : ""), text);
    const headRow = make("tr");
    block.head.forEach((text, n) => headRow.append(cell("th", text, block.align[n])));
    const body = make("tbody");
    for (const row of block.rows) {
      const line = make("tr");
      block.head.forEach((_, n) => line.append(cell("td", row[n] || "", block.align[n])));
      body.append(line);
    }
    const head = make("thead");
    head.append(headRow);
    const table = make("table");
    table.append(head, body);
    const wrap = make("div", "table-wrap"); // a wide table scrolls, not the page
    wrap.append(table);
    return wrap;
  }

  function codeNode(block) {
    const language = block.lang.slice(0, 40);
    const code = make("code", /^[\w.+#-]+$/.test(language) ? `language-${language}` : "", block.text);
    const copyButton = make("button", "copy", "Copy");
    copyButton.type = "button";
    copyButton.title = "Copy the code";
    copyButton.addEventListener("click", () => copy(block.text, copyButton, code));
    const head = make("div", "code-head");
    head.append(make("span", "code-lang", language || "code"), copyButton);
    const pre = make("pre");
    pre.append(code);
    const box = make("div", block.closed ? "code-block" : "code-block open");
    box.append(head, pre);
    return box;
  }

  // --- copying --------------------------------------------------------------------------------

  // The clipboard API needs a secure context (https, or localhost); over plain http on another
  // address the older copy command does it, and failing both the code is selected for the
  // person to copy.
  async function copy(text, button, code) {
    let copied = false;
    if (navigator.clipboard && window.isSecureContext) {
      try {
        await navigator.clipboard.writeText(text);
        copied = true;
      } catch {
        copied = false;
      }
    }
    if (!copied) copied = copyThroughSelection(text, button);
    if (!copied) select(code);
    flash(button, copied ? "Copied" : "Selected: press Ctrl+C");
  }

  function copyThroughSelection(text, button) {
    const buffer = make("textarea", "markdown-copy-buffer");
    buffer.value = text;
    buffer.readOnly = true;
    document.body.append(buffer);
    buffer.select();
    let copied = false;
    try {
      copied = document.execCommand("copy");
    } catch {
      copied = false;
    }
    buffer.remove();
    button.focus();
    return copied;
  }

  function select(node) {
    const range = document.createRange();
    range.selectNodeContents(node);
    const selection = window.getSelection();
    selection.removeAllRanges();
    selection.addRange(range);
  }

  const flashes = new WeakMap(); // button -> the timer that puts "Copy" back
  function flash(button, label) {
    button.textContent = label;
    button.classList.add("copied");
    clearTimeout(flashes.get(button));
    flashes.set(
      button,
      setTimeout(() => {
        button.textContent = "Copy";
        button.classList.remove("copied");
      }, COPIED_MS),
    );
  }

  // --- rendering ------------------------------------------------------------------------------

  const shown = new WeakMap(); // container -> its top-level blocks: [{key, node}]

  function render(container, text) {
    container.classList.add("markdown");
    const lines = String(text).replace(/\r\n?/g, "\n").split("\n");
    const before = shown.get(container) || [];
    const after = [];
    let i = 0;
    while (i < lines.length) {
      if (blank(lines[i])) {
        i += 1;
        continue;
      }
      const { block, end } = parseBlock(lines, i, 0);
      // a block is its source: the same source, the same node (kept, not rebuilt)
      const key = `${block.type}${block.closed === false ? " open" : ""}\n${lines.slice(i, end).join("\n")}`;
      const old = before[after.length];
      after.push(old && old.key === key ? old : { key, node: blockNode(block) });
      i = end;
    }
    after.forEach((entry, index) => {
      const old = before[index];
      if (old && old.node === entry.node) return;
      if (old && old.node.parentNode === container) container.replaceChild(entry.node, old.node);
      else container.append(entry.node);
    });
    for (const old of before.slice(after.length)) old.node.remove();
    shown.set(container, after);
  }

  return { render };
})();
