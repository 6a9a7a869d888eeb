"""The sentences the pages show: fixed prose as named constants, and the functions that make
sentences from the model (properties, outcomes), so a page holds layout, not wording."""
