"""The string functions."""

from __future__ import annotations


def test_length_case_reverse_split_locate_repeat(esql) -> None:  # type: ignore[no-untyped-def]
    cols, rows = esql('ROW s = "Hello World" | EVAL l = LENGTH(s), u = TO_UPPER(s), lo = TO_LOWER(s), r = REVERSE(s), '
                      'sp = SPLIT(s, " "), loc = LOCATE(s, "World"), rep = REPEAT("ab", 3), b = BIT_LENGTH(s), '
                      'by = BYTE_LENGTH("é")')  # fmt: skip
    assert [t for _, t in cols[1:]] == ["integer", "keyword", "keyword", "keyword", "keyword", "integer", "keyword",
                                        "integer", "integer"]  # fmt: skip
    assert rows[0][1:] == [11, "HELLO WORLD", "hello world", "dlroW olleH", ["Hello", "World"], 7, "ababab", 88, 2]


def test_trim_space_substring_left_right(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW s = " a " | EVAL t = TRIM(s), l = LTRIM(s), r = RTRIM(s), sp = CONCAT("[", SPACE(3), "]"), '
                   'sub = SUBSTRING("hello", -3, 2), sub2 = SUBSTRING("hello", 2), left = LEFT("hello", 2), rt = RIGHT("hello", 2)')  # fmt: skip
    assert rows[0][1:] == ["a", "a ", " a", "[   ]", "ll", "ello", "he", "lo"]


def test_hashes_and_base64(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW s = "hello" | EVAL h = MD5(s), s1 = SHA1(s), hh = HASH("sha256", s), b = TO_BASE64(s), '
                   'f = FROM_BASE64("aGVsbG8=")')  # fmt: skip
    assert rows[0][1:] == ["5d41402abc4b2a76b9719d911017c592", "aaf4c61ddcc5e8a2dabede0f3b482cd9aea9434d",
                           "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824", "aGVsbG8=", "hello"]  # fmt: skip


def test_replace_is_a_regex_and_prefix_tests(esql) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW s = "Hello" | EVAL r = REPLACE(s, "l+", "L"), st = STARTS_WITH(s, "He"), en = ENDS_WITH(s, "lo")')
    assert rows[0][1:] == ["HeLo", True, True]


def test_concat_with_null_and_multi_values(esql, esql_warnings) -> None:  # type: ignore[no-untyped-def]
    _, rows = esql('ROW a = "x" | EVAL c = CONCAT(a, null), d = CONCAT(a, "-", "y")')
    assert rows[0][1:] == [None, "x-y"]
    q = 'ROW a = ["x", "y"] | EVAL l = LENGTH(a)'
    assert esql(q)[1] == [[["x", "y"], None]]
    assert esql_warnings(q)[1].endswith("single-value function encountered multi-value")


def test_string_function_type_errors(esql_error) -> None:  # type: ignore[no-untyped-def]
    assert esql_error("ROW a = LENGTH(1)").type == "verification_exception"
    assert esql_error('ROW a = REPEAT("x", "y")').type == "verification_exception"
