"""The colours of runs in every chart: the wizard's plots and the PDF's.

Okabe & Ito's palette: eight colours that stay apart for the common colour-vision
deficiencies (tests/gui/test_gui_layout.py checks it); yellow last, it is the
weakest on white. Plain data, so the GUI and the report share it.
"""

PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000", "#F0E442")
