// The console's assets as text. Their content hashes are computed by `pnpm generate` (asset-hashes.generated.ts),
// so serving them needs no hashing at run time; a test fails when the two drift.

/** The console's stylesheet: plain CSS, no build step; system fonts, so nothing is fetched from elsewhere. */
export const CSS = `:root{--fg:#1b1f24;--muted:#57606a;--bg:#fff;--panel:#f6f8fa;--line:#d0d7de;--accent:#0a58ca;--bad:#b42318;--good:#1a7f37;--warn:#9a6700;color-scheme:light}
*{box-sizing:border-box}
body{margin:0;font:15px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid var(--accent);outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
header.top{display:flex;flex-wrap:wrap;gap:8px 16px;align-items:center;padding:8px 16px;border-bottom:1px solid var(--line);background:var(--panel)}
header.top .brand{font-weight:700;text-decoration:none;color:var(--fg)}
nav.main ul{display:flex;flex-wrap:wrap;gap:4px 12px;list-style:none;margin:0;padding:0}
nav.main a[aria-current=page]{font-weight:700;color:var(--fg)}
header.top form{margin-left:auto}
main{padding:16px;max-width:1100px;margin:0 auto}
h1{font-size:1.5rem;margin:.2em 0 .6em}h2{font-size:1.15rem;margin:1.4em 0 .5em}
table{border-collapse:collapse;width:100%;font-size:.93rem}
.scroll{overflow-x:auto}
th,td{text-align:left;padding:6px 8px;border-bottom:1px solid var(--line);vertical-align:top}
th{background:var(--panel);font-weight:600}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.88rem}
pre{background:var(--panel);border:1px solid var(--line);padding:8px;overflow:auto;max-height:24rem;white-space:pre-wrap;word-break:break-word}
form.inline{display:inline}
form.stack{display:grid;gap:8px;max-width:32rem;margin:8px 0 16px}
form.filters{display:flex;flex-wrap:wrap;gap:8px;align-items:end;margin:8px 0 16px}
label{display:grid;gap:2px;font-weight:600;font-size:.9rem}
label.check{display:flex;gap:6px;align-items:center;font-weight:400}
label.stacked{display:inline-grid}
.wide{width:100%}
input,select,textarea{font:inherit;padding:6px 8px;border:1px solid var(--muted);border-radius:4px;background:#fff;color:var(--fg);max-width:100%}
textarea{min-height:6rem}
button{font:inherit;padding:6px 12px;border-radius:4px;border:1px solid var(--accent);background:var(--accent);color:#fff;cursor:pointer}
button.secondary{background:#fff;color:var(--accent)}
button.danger{background:#fff;color:var(--bad);border-color:var(--bad)}
.badge{display:inline-block;padding:0 6px;border-radius:10px;border:1px solid var(--line);font-size:.8rem}
.s-completed,.s-ok,.s-active,.s-healthy{color:var(--good);border-color:var(--good)}
.s-failed,.s-error,.s-blocked,.s-denied,.s-disabled,.s-revoked,.s-cancelled,.s-timed-out{color:var(--bad);border-color:var(--bad)}
.s-running,.s-queued,.s-waiting{color:var(--warn);border-color:var(--warn)}
.notice{border:1px solid var(--line);border-left:4px solid var(--accent);padding:8px 12px;background:var(--panel);margin:8px 0}
.notice.error{border-left-color:var(--bad)}
.empty{color:var(--muted);border:1px dashed var(--line);padding:16px;text-align:center}
.details{white-space:pre-wrap;word-break:break-word;margin:4px 0 0}
.secret{display:flex;flex-wrap:wrap;gap:8px;align-items:center}
.secret input{flex:1 1 16rem;font-family:ui-monospace,monospace}
ol.timeline{list-style:none;padding:0;border-left:3px solid var(--line);margin-left:6px}
ol.timeline li{position:relative;padding:4px 0 8px 16px}
ol.timeline li::before{content:"";position:absolute;left:-8px;top:10px;width:12px;height:12px;border-radius:50%;background:var(--line)}
iframe.result{width:100%;min-height:16rem;border:1px solid var(--line)}
.pager{display:flex;gap:12px;margin:12px 0}
.muted{color:var(--muted)}
.signin{max-width:28rem;margin:10vh auto}
.charts{display:grid;gap:8px 24px;grid-template-columns:repeat(auto-fit,minmax(min(100%,24rem),1fr))}
.charts>section{min-width:0}
.chart-box{margin:4px 0 12px;min-width:0}
svg.chart{display:block;width:100%;height:auto}
svg .axis{stroke:var(--muted);stroke-width:1}
svg .tick,svg .value{font-size:14px;fill:var(--muted)}
svg .label{font-size:14px;fill:var(--fg)}
svg .chart-empty{font-size:15px;fill:var(--muted)}
svg .track{fill:var(--panel);stroke:var(--line)}
.c-ok{fill:var(--good);background:var(--good)}.c-error{fill:var(--bad);background:var(--bad)}.c-blocked{fill:var(--warn);background:var(--warn)}.c-limited{fill:#6f42c1;background:#6f42c1}.c-muted{fill:#8c959f;background:#8c959f}.c-1{fill:var(--accent);background:var(--accent)}
.legend{display:flex;flex-wrap:wrap;gap:2px 14px;list-style:none;margin:2px 0;padding:0;font-size:.88rem}
.swatch{display:inline-block;width:.8em;height:.8em;margin-right:6px;border-radius:2px;vertical-align:-1px}
.numbers summary{cursor:pointer;color:var(--accent);font-size:.9rem}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.spark-cell{display:flex;flex-wrap:wrap;gap:2px 8px;align-items:center}
.spark-box{display:block;width:7rem}
svg.spark{display:block;width:100%;height:auto}
svg .spark-line{fill:none;stroke:var(--accent);stroke-width:1.5}
svg .spark-dot{fill:var(--accent)}
@media (max-width:600px){main{padding:10px}th,td{padding:4px}header.top form{margin-left:0}}
`;

/** Copy buttons (the one script; loaded from the gateway, so the CSP needs no inline script). */
export const JS = `document.addEventListener('click',function(e){var b=e.target.closest('[data-copy]');if(!b)return;var f=document.getElementById(b.getAttribute('data-copy'));if(!f)return;f.select();var done=function(){b.textContent='Copied';};if(navigator.clipboard){navigator.clipboard.writeText(f.value).then(done,function(){document.execCommand('copy');done();});}else{document.execCommand('copy');done();}});
document.addEventListener('change',function(e){var f=e.target.form;if(f&&f.hasAttribute('data-autosubmit'))f.requestSubmit();});
`;
