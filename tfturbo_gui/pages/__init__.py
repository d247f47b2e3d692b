"""The wizard's pages, one module per checklist step (DESIGN.md section 1)."""
