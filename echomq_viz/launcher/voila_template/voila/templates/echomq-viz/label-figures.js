/* Name each static figure (an image widget: a matplotlib figure no control moves, notebook 10's
   growth plots) by its caption: a screen reader would meet an unnamed image, and the caption
   under it, as unrelated things. A view puts its caption (class echomq-viz-caption) right after
   its figure. A view drawn in the page names its own figure (its SVG's <title>). */
let echomqVizCaptions = 0;
// unnamed: no name yet, or a name whose caption node was replaced since (a redraw)
const echomqVizUnnamed = img => !document.getElementById(img.getAttribute("aria-labelledby") || "");
new MutationObserver(() => {
  if (![...document.querySelectorAll("img.widget-image")].some(echomqVizUnnamed)) return;
  document.querySelectorAll(".echomq-viz-caption").forEach(caption => {
    let figure = null;
    for (let node = caption.previousElementSibling; node && !figure; node = node.previousElementSibling) {
      figure = node.matches("img.widget-image") ? node : node.querySelector("img.widget-image");
    }
    if (!figure || !echomqVizUnnamed(figure)) return;
    const text = caption.querySelector(".widget-html-content") || caption;
    text.id = text.id || `echomq-viz-caption-${++echomqVizCaptions}`;
    figure.setAttribute("aria-labelledby", text.id);
  });
  // a widget gets its classes (the caption's echomq-viz-caption) after its node is in place
}).observe(document.documentElement, {childList: true, subtree: true, attributes: true, attributeFilter: ["class"]});
