/* Name each slider handle after its slider's description, as widgets appear. */
new MutationObserver(() => {
  document.querySelectorAll(".widget-slider").forEach(slider => {
    const label = ((slider.querySelector(".widget-label") || {}).textContent || "").trim();
    slider.querySelectorAll(".noUi-handle:not([aria-label])").forEach(handle => {
      handle.setAttribute("aria-label", label || "slider");
    });
  });
}).observe(document.documentElement, {childList: true, subtree: true});
