"""JavaScript semantics for emulated JavaScript clients: values (values.py) and V8's JSON.parse (json_parse.py)."""
