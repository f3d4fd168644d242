import { readFileSync } from "node:fs";
import { JSDOM } from "jsdom";
const dom = new JSDOM("<!doctype html><html><body></body></html>", { pretendToBeVisual: true });
globalThis.window = dom.window;
globalThis.document = dom.window.document;
for (const k of ["Element", "HTMLElement", "Node", "DOMParser", "navigator", "getComputedStyle"]) {
  if (!(k in globalThis)) { try { globalThis[k] = dom.window[k]; } catch (e) {} }
}
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false, securityLevel: "strict" });
const files = process.argv.slice(2);
let bad = 0;
for (const f of files) {
  const text = readFileSync(f, "utf8");
  try {
    const r = await mermaid.parse(text);
    console.log(JSON.stringify({ file: f, ok: true, type: r.diagramType }));
  } catch (e) {
    bad++;
    console.log(JSON.stringify({ file: f, ok: false, error: String(e.message || e).slice(0, 500) }));
  }
}
process.exit(bad ? 1 : 0);
