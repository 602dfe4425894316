// Chat: lines are always text nodes (never markup), newest at the bottom.
import { h } from "./dom.js";

export function chatPanel(send) {
  const lines = [];
  const list = h("ul.lines", { "aria-live": "polite", "aria-label": "Chat messages" });
  const input = h("input", { type: "text", maxlength: 500, placeholder: "Say something…", "aria-label": "Chat message", id: "chat-input", autocomplete: "off" });
  const err = h("p.err", { role: "alert" });
  const form = h("form", {
    onsubmit: async (e) => {
      e.preventDefault();
      const text = input.value.trim();
      if (!text) return;
      err.textContent = "";
      try {
        await send(text);
        input.value = "";
      } catch (ex) {
        err.textContent = ex.message;
      }
    },
  }, input, h("button", { type: "submit" }, "Send"));
  const el = h("div.chat", list, form, err);
  const scroll = () => {
    list.scrollTop = list.scrollHeight;
  };
  const addRaw = (line) => {
    lines.push(line);
    list.append(h("li", line.name ? [h("span.from", `${line.name}:`), " "] : null, h("span", line.text)));
    if (list.children.length > 300) list.firstChild.remove();
    scroll();
  };
  return {
    el,
    lines,
    addRaw,
    add(event) {
      addRaw({ name: event.name || (event.seat !== null && event.seat !== undefined ? `Seat ${event.seat + 1}` : "Watcher"), text: String(event.text ?? "") });
    },
    scroll,
  };
}
