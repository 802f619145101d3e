"""The curation dashboard: server-rendered pages with htmx for the small
updates, one module per view. Views read through memory.selectors and write
through the same services the API calls; they only translate forms and pick
templates."""
