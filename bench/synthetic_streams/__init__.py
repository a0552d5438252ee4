"""Synthetic response bodies, one module per protocol package (see `synthetic.py`)."""
