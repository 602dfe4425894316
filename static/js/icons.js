// Small pictures drawn as SVG, for marks that would otherwise need an emoji
// the reader's fonts may lack (an empty box instead of a toilet or a robot).
import { svg, h } from "./dom.js";

const PATHS = {
  // a toilet seen from the side: tank, bowl, foot
  toilet: ["M5 2h6v6H5z", "M3 9h13c0 3.5-2.4 6-6 6.6V19H6v-3.7C4.2 14.6 3 12.3 3 9z"],
  // a robot's head: antenna, face, two eyes
  bot: ["M11 1h2v3h-2z", "M4 5h16v12H4z M8 9v3h2V9z M14 9v3h2V9z", "M7 18h10v2H7z"],
};

/** An icon that says `label` to a screen reader and as a tooltip. */
export function icon(name, label) {
  const pic = svg("svg", { viewBox: "0 0 24 24", class: `icon icon-${name}`, "aria-hidden": "true", focusable: "false" },
    PATHS[name].map((d) => svg("path", { d, "fill-rule": "evenodd" })));
  return h("span.iconwrap", { role: "img", "aria-label": label, title: label }, pic);
}
