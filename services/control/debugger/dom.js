// Small DOM helpers of the debugger page. Every value from the server goes in as textContent,
// never as HTML.

/** An element of `tag` whose text is `text`. */
function withText(tag, text) {
  const e = document.createElement(tag);
  e.textContent = text;
  return e;
}

export function option(value, text) {
  const o = /** @type {HTMLOptionElement} */ (withText('option', text));
  o.value = value;
  return o;
}

export function span(className, text) {
  const s = withText('span', text);
  s.className = className;
  return s;
}

export function paragraph(className, text) {
  const p = withText('p', text);
  p.className = className;
  return p;
}

export function row(cellTag, values) {
  const tr = document.createElement('tr');
  for (const v of values) {
    const c = document.createElement(cellTag);
    if (cellTag === 'th') c.scope = 'col';
    c.textContent = v;
    tr.append(c);
  }
  return tr;
}

/** Local time with milliseconds (calls of one second are common); the full date on hover is not needed here. */
export function formatTime(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  const pad = (n, w = 2) => String(n).padStart(w, '0');
  const today = new Date().toDateString() === d.toDateString();
  const time = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
  return today ? time : `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${time}`;
}

export function addTerm(list, term, value) {
  const dt = document.createElement('dt');
  dt.textContent = term;
  const dd = document.createElement('dd');
  dd.append(value);
  list.append(dt, dd);
  return dd;
}

export function preformatted(className, text) {
  const pre = document.createElement('pre');
  pre.className = className;
  pre.textContent = text;
  return pre;
}
