"""Tests of what users meet first: the CLI's bad input and start-up cost, the parsers under
fuzzing, the JSON Schemas, the examples, the docs and the type stubs."""
