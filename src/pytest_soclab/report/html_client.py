"""What the HTML report's page carries once: the items' style and the script that unpacks them.

pytest-html inserts each item's extras with `insertAdjacentHTML` (scripts there never
run) and rebuilds the rows on every sort and filter, so one script in the summary
watches the table and unpacks an item's packed detail (`report/packed.py`) when its
row is shown, then fills its long values from the page's one text store
(`report/html_store.py`). The query `?collapsed=&soclab_open=1` shows every item with every tool
result open (what the screenshot test and a printout want).
"""

from __future__ import annotations

ITEM_CSS = """
.soclab-item{color:#222;max-width:100%;overflow-wrap:anywhere}
.soclab-item table{border-collapse:collapse;margin:.3em 0 1em;width:100%;table-layout:fixed}
.soclab-item td,.soclab-item th{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top;font-size:12px}
.soclab-item pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:0;background:#f7f7f7;padding:4px;font-size:11.5px}
.soclab-item details>pre{max-height:40em;overflow:auto;margin-top:3px}
.soclab-item summary{cursor:pointer;font-family:monospace;font-size:11.5px}
.soclab-item summary .size{color:#666;font-family:Helvetica,Arial,sans-serif}
.soclab-item .md{border-left:3px solid #bbb;padding-left:8px;overflow-x:auto}
.soclab-item .md pre,.soclab-item .md code{white-space:pre-wrap;overflow-wrap:anywhere}
.soclab-item .pass{color:#2e7d32;font-weight:bold} .soclab-item .fail{color:#c62828;font-weight:bold}
.soclab-item pre.err{border-left:3px solid #c62828} .soclab-item .deny{color:#c62828} .soclab-item .shadow{color:#ef6c00}
.soclab-item col.seq{width:3em} .soclab-item col.tool{width:9em} .soclab-item col.args{width:30%}
.soclab-item col.guard{width:13em} .soclab-item col.dim{width:11em} .soclab-item col.pts{width:5em}
.soclab-item col.verdict{width:5em} .soclab-item col.oracle{width:14em} .soclab-item col.ok{width:4em}
.soclab-packed[data-state=loading]::after{content:"unpacking...";color:#666}
"""

# Plain ES2018. The detail it sets as innerHTML was rendered by report/html_item.py with
# all agent and scenario text escaped; the long texts go in as textContent, never markup.
CLIENT_JS = """
(() => {
  const openAll = new URLSearchParams(location.search).has('soclab_open');
  const details = new Map();
  let store = null;
  const unpack = async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream('gzip'));
    return new Response(stream).text();
  };
  const texts = () => {
    if (store === null) {
      const el = document.getElementById('soclab-texts');
      store = el ? unpack(el.dataset.gz).then(JSON.parse) : Promise.resolve({});
    }
    return store;
  };
  const fill = async (el) => {
    el.dataset.state = 'loading';
    const key = el.dataset.gz;
    try {
      if (!details.has(key)) details.set(key, await unpack(key));
      el.innerHTML = details.get(key);
      const refs = el.querySelectorAll('pre[data-ref]');
      if (refs.length) {
        const all = await texts();
        refs.forEach((pre) => {
          const text = all[pre.dataset.ref];
          pre.textContent = text === undefined ? '(not in this report)' : text;
          const pv = pre.parentElement.querySelector('summary .pv');
          if (pv) pv.textContent = pre.textContent.replace(/\\s+/g, ' ').slice(0, 160);
        });
      }
      if (openAll) el.querySelectorAll('details').forEach((d) => { d.open = true; });
      el.dataset.state = 'done';
    } catch (err) {
      el.textContent = 'soclab: could not unpack this item (' + err + ')';
      el.dataset.state = 'error';
    }
  };
  const scan = () => {
    document.querySelectorAll('.soclab-packed:not([data-state])').forEach((el) => {
      if (!el.closest('.hidden')) fill(el);
    });
  };
  if (typeof DecompressionStream === 'undefined') {
    document.addEventListener('DOMContentLoaded', () => {
      document.querySelectorAll('.soclab-packed').forEach((el) => {
        el.textContent = 'soclab: this browser lacks DecompressionStream; open the report in a current browser';
      });
    });
    return;
  }
  new MutationObserver(scan).observe(document.documentElement, {
    childList: true, subtree: true, attributes: true, attributeFilter: ['class'],
  });
  document.addEventListener('DOMContentLoaded', scan);
})();
"""


def page_assets() -> str:
    """The style and script the items need, once per page (in pytest-html's summary)."""
    return f'<style>{ITEM_CSS}</style><script>{CLIENT_JS}</script>'
