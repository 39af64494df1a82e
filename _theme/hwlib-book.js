// Book-wide page code (html_js_files in _config.yml): a header button that downloads the whole book as
// one PDF (`make pdf` prints it with Chromium and copies it next to the HTML). The address is built from
// the page's content root, so it works from any folder depth and under any site prefix.
document.addEventListener("DOMContentLoaded", () => {
  const bar = document.querySelector(".article-header-buttons");
  if (!bar || bar.querySelector(".hwlib-pdf-button")) return;    // once, even if the script is included twice
  const root = document.documentElement.dataset.content_root || "./";
  const link = document.createElement("a");
  link.className = "btn btn-sm pst-navbar-icon hwlib-pdf-button";
  link.href = new URL(root + "hardware-for-ai.pdf", window.location.href).href;
  link.title = "The whole book as one PDF";
  link.setAttribute("aria-label", "Download the whole book as one PDF");
  link.setAttribute("download", "");
  link.textContent = "PDF";
  bar.prepend(link);
});
