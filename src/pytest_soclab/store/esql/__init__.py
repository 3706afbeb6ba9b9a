"""ES|QL over the embedded store: lark grammar, verifier and translation to DuckDB SQL."""
