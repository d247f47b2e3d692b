"""The wizard's pages, one module per page of the wizard, in the order of `main_window.PAGES`."""
