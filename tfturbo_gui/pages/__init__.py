"""The wizard's pages, one module per page, in the order of `main_window.page_classes()` (the levers' order)."""
