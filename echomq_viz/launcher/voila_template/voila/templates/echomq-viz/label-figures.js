/* Expose each figure as one image whose accessible name is its caption. ipympl draws on bare
   canvases, so a screen reader would meet them, and the caption under them, as unrelated things.
   A view puts its caption (class echomq-viz-caption) right after its figure. */
let echomqVizCaptions = 0;
new MutationObserver(() => {
  if (!document.querySelector(".jupyter-matplotlib-canvas-div:not([role])")) return;
  document.querySelectorAll(".echomq-viz-caption").forEach(caption => {
    let figure = null;
    for (let node = caption.previousElementSibling; node && !figure; node = node.previousElementSibling) {
      figure = node.querySelector(".jupyter-matplotlib-canvas-div");
    }
    if (!figure || figure.hasAttribute("role")) return;
    const text = caption.querySelector(".widget-html-content") || caption;
    text.id = text.id || `echomq-viz-caption-${++echomqVizCaptions}`;
    figure.setAttribute("role", "img");
    figure.setAttribute("aria-labelledby", text.id);
  });
}).observe(document.documentElement, {childList: true, subtree: true});
