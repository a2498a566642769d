"""One module per widget (or family of widgets) that needs server data; see app.widgets."""
