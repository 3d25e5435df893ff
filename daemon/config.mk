# Config tests and fuzz target.
