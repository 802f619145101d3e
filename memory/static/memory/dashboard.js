// Behaviour the pages used to carry in inline handlers, which the
// Content-Security-Policy does not run: <select data-autosubmit> submits its
// form on change, <form data-confirm="..."> asks before it is sent. Delegated
// from the document, so fragments htmx swaps in work too.
document.addEventListener("change", (event) => {
  const field = event.target;
  if (field instanceof HTMLSelectElement && field.hasAttribute("data-autosubmit") && field.form) {
    field.form.submit();
  }
});
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute && event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
}, true);
