"""`primus_lang.recipes.shell`: a launch script read as bash would run it, without running anything.

Every script here is small and written for the test (the forms are the ones Megatron-LM's example
launch scripts use); each test's docstring says what bash does with it."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from pathlib import Path

import pytest

from primus_lang.diagnostics import CompileError
from primus_lang.recipes import shell
from primus_lang.recipes.shell import ShellError, launch_of, read_launch
from primus_lang.recipes.words import Launch, Word

FILE = "train.sh"


def launch(text: str, given: Mapping[str, str] | None = None, positional: tuple[str, ...] = ()) -> Launch:
    """The launch a script runs (the script dedented, so tests can indent it)."""
    return read_launch(textwrap.dedent(text), FILE, given or {}, positional)


def texts(text: str, given: Mapping[str, str] | None = None, positional: tuple[str, ...] = ()) -> list[str]:
    """The launch command's words as text."""
    return [w.text for w in launch(text, given, positional).words]


def args(text: str, given: Mapping[str, str] | None = None, positional: tuple[str, ...] = ()) -> list[str]:
    """The words after `python pretrain_gpt.py`."""
    words = texts(text, given, positional)
    assert words[:2] == ["python", "pretrain_gpt.py"], words
    return words[2:]


def word_after(result: Launch, flag: str) -> Word:
    """The word that follows ``flag`` in the launch."""
    words = list(result.words)
    k = [w.text for w in words].index(flag)
    return words[k + 1]


# ---- assignments and arrays ----------------------------------------------------------------------


def test_plain_assignment_and_export_expand_in_the_launch() -> None:
    """`A=1; export B=2; python x.py $A $B` runs with 1 and 2, and B in the command's environment."""
    result = launch("""
        A=1
        export B=2
        python pretrain_gpt.py --a $A --b $B
    """)
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--a", "1", "--b", "2"]
    assert result.env == (("B", "2"),)


def test_export_of_an_existing_name_and_declare_x_export_it() -> None:
    """`export A` and `declare -x C=3` put A and C in the environment; a plain `B=2` stays local."""
    result = launch("""
        A=1
        B=2
        export A
        declare -x C=3
        readonly D=4
        python pretrain_gpt.py $A $B $C $D
    """)
    assert [w.text for w in result.words][2:] == ["1", "2", "3", "4"]
    assert result.env == (("A", "1"), ("C", "3"))


def test_local_and_declare_inside_a_function_set_values_the_function_uses() -> None:
    """`local X=5; declare Y=6` inside a function give the function's command 5 and 6."""
    assert args("""
        f() { local X=5; declare Y=6; python pretrain_gpt.py $X $Y; }
        f
    """) == ["5", "6"]


def test_local_does_not_leak_out_of_its_function() -> None:
    """`X=1; f() { local X=5; }; f; echo $X` prints 1."""
    assert args("""
        f() { local X=5; }
        X=1
        f
        python pretrain_gpt.py $X
    """) == ["1"]


def test_a_command_prefix_assignment_is_the_commands_environment() -> None:
    """`CUDA_VISIBLE_DEVICES=0,1 python x.py > log 2>&1` runs python with that variable, output redirected."""
    result = launch("""
        CUDA_VISIBLE_DEVICES=0,1 python pretrain_gpt.py --a 1 > log.txt 2>&1
    """)
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--a", "1"]
    assert result.env == (("CUDA_VISIBLE_DEVICES", "0,1"),)


def test_append_to_a_scalar_and_to_an_array() -> None:
    """`A=x; A+=y` is "xy"; `B=(1 2); B+=(3)` has three elements."""
    assert args("""
        A=x
        A+=y
        B=(1 2)
        B+=(3)
        python pretrain_gpt.py $A "${B[@]}"
    """) == ["xy", "1", "2", "3"]


def test_array_literal_across_lines_with_comments_inside() -> None:
    """An array written over several lines keeps its words; `#` comments inside it are not elements."""
    assert args("""
        ARGS=(
            --tp 4   # tensor parallel
            # a whole-line comment
            --name "two words"
        )
        python pretrain_gpt.py "${ARGS[@]}"
    """) == ["--tp", "4", "--name", "two words"]


def test_quoted_at_keeps_elements_apart_even_with_spaces_inside() -> None:
    """`"${A[@]}"` gives one word per element, a blank inside an element included."""
    assert args("""
        A=(--fp8-format\\ hybrid "--name a b" plain)
        python pretrain_gpt.py "${A[@]}"
    """) == ["--fp8-format hybrid", "--name a b", "plain"]


def test_unquoted_at_word_splits_each_element() -> None:
    """Unquoted `${A[@]}` splits the element "--fp8-format hybrid" into two words."""
    assert args("""
        PREC=("--fp8-format hybrid" --bf16)
        python pretrain_gpt.py ${PREC[@]}
    """) == ["--fp8-format", "hybrid", "--bf16"]


def test_quoted_star_joins_elements_and_unquoted_star_splits() -> None:
    """`"${A[*]}"` is one word "a b c"; unquoted `${A[*]}` is three."""
    assert args("""
        A=(a b c)
        python pretrain_gpt.py "${A[*]}" ${A[*]}
    """) == ["a b c", "a", "b", "c"]


def test_array_length_and_one_element() -> None:
    """`${#A[@]}` is the number of elements; `${A[1]}` the second; an index can be arithmetic."""
    assert args("""
        A=(a b c)
        I=0
        python pretrain_gpt.py ${#A[@]} ${A[1]} ${A[$((1+1))]} ${A[I]}
    """) == ["3", "b", "c", "a"]


def test_element_assignment_sets_one_element() -> None:
    """`A[2]=x` replaces the third element."""
    assert args("""
        A=(a b c)
        A[2]=x
        python pretrain_gpt.py "${A[@]}"
    """) == ["a", "b", "x"]


def test_sparse_array_length_counts_set_elements() -> None:
    """`A=(a b c); A[5]=z; echo ${#A[@]}` prints 4."""
    assert args("""
        A=(a b c)
        A[5]=z
        python pretrain_gpt.py ${#A[@]}
    """) == ["4"]


def test_quoted_at_keeps_an_empty_element() -> None:
    """`A=(a "" b); cmd "${A[@]}"` passes three arguments, the second empty."""
    assert args("""
        A=(a "" b)
        python pretrain_gpt.py "${A[@]}"
    """) == ["a", "", "b"]


def test_negative_array_index_counts_from_the_end() -> None:
    """`A=(a b c); echo ${A[-1]}` prints c."""
    assert args("""
        A=(a b c)
        python pretrain_gpt.py ${A[-1]}
    """) == ["c"]


def test_length_of_one_element() -> None:
    """`A=(abc b); echo ${#A[0]}` prints 3."""
    assert args("""
        A=(abc b)
        python pretrain_gpt.py ${#A[0]}
    """) == ["3"]


def test_at_inside_a_longer_quoted_word_attaches_prefix_and_suffix() -> None:
    """`"x${A[@]}y"` on (a "b c" d) gives `xa`, `b c`, `dy`."""
    assert args("""
        A=(a "b c" d)
        python pretrain_gpt.py "x${A[@]}y"
    """) == ["xa", "b c", "dy"]


# ---- parameter expansion -------------------------------------------------------------------------


def test_default_forms_on_an_unset_variable() -> None:
    """Unset X: `${X:-d}` and `${X-d}` are d (and the note names the default taken)."""
    result = launch("""
        python pretrain_gpt.py ${X:-d} ${X-e}
    """)
    assert [w.text for w in result.words][2:] == ["d", "e"]
    assert any("`X`=`d`" in note for note in result.notes)


def test_colon_dash_and_dash_differ_on_an_empty_variable() -> None:
    """Empty X: `${X:-d}` is d; `"${X-d}"` is the empty word (X is set); `${X:+alt}` is nothing."""
    assert args("""
        X=
        python pretrain_gpt.py ${X:-d} "${X-d}" ${X:+alt} end
    """) == ["d", "", "end"]


def test_assign_default_sets_the_variable() -> None:
    """`: ${X:=dflt}` assigns dflt to X for the rest of the script."""
    assert args("""
        : ${X:=dflt}
        python pretrain_gpt.py $X
    """) == ["dflt"]


def test_alternative_value_when_set() -> None:
    """`${Y:+alt}` is alt when Y is non-empty."""
    assert args("""
        Y=v
        python pretrain_gpt.py ${Y:+alt}
    """) == ["alt"]


def test_error_if_unset_stops_the_reading() -> None:
    """`${X:?msg}` with X unset stops the script: the reader cannot say what it launches."""
    with pytest.raises(ShellError, match="X"):
        launch("""
            python pretrain_gpt.py ${X:?need X}
        """)


def test_quoted_default_inside_unquoted_expansion_is_one_word() -> None:
    """`X unset; printf '[%s]' ${X:-"a b"}` prints `[a b]`: one word."""
    assert args("""
        python pretrain_gpt.py ${X:-"a b"}
    """) == ["a b"]


def test_unquoted_default_with_a_blank_splits() -> None:
    """`${X:-a b}` unquoted, X unset, is two words."""
    assert args("""
        python pretrain_gpt.py ${X:-a b}
    """) == ["a", "b"]


def test_pattern_removal_prefix_and_suffix() -> None:
    """`#`/`##` cut the shortest/longest prefix, `%`/`%%` the shortest/longest suffix."""
    assert args("""
        X=pre.mid.suf
        python pretrain_gpt.py ${X#pre} ${X#*.} ${X##*.} ${X%.*} ${X%%.*} ${X%%suf}
    """) == [".mid.suf", "mid.suf", "suf", "pre.mid", "pre", "pre.mid."]


def test_substitution_first_and_all() -> None:
    """`${X/./_}` replaces the first match, `${X//./_}` every match; `*` matches greedily."""
    assert args("""
        X=main.middle.end
        python pretrain_gpt.py ${X/./_} ${X//./_} ${X/m*d/Q}
    """) == ["main_middle.end", "main_middle_end", "Q"]


def test_substitution_with_a_bracket_pattern() -> None:
    """`X=main.end; echo ${X//[ae]/_}` prints `m_in._nd`."""
    assert args("""
        X=main.end
        python pretrain_gpt.py ${X//[ae]/_}
    """) == ["m_in._nd"]


def test_substring_case_and_length() -> None:
    """`${X:1:2}`, `${X: -6}`, `${X^^}`, `${X,,}` and `${#X}` on `Fp8_hybrid`."""
    assert args("""
        X=Fp8_hybrid
        python pretrain_gpt.py ${X:1:2} ${X: -6} ${X^^} ${X,,} ${#X}
    """) == ["p8", "hybrid", "FP8_HYBRID", "fp8_hybrid", "10"]


def test_arithmetic_with_variables_precedence_and_parentheses() -> None:
    """`$((GPUS*NODES))`, `$((1+2*3))` is 7, `$(((1+2)*3))` is 9; `**` is right-associative."""
    assert args("""
        GPUS=8
        NODES=2
        python pretrain_gpt.py $((GPUS*NODES)) $(( $GPUS * ${NODES} / 4 )) $((1+2*3)) $(((1+2)*3)) \\
            $((10 - 2 - 3)) $((2 ** 3 ** 2)) $((100 / 7 % 4)) $((-7 / 2)) $((GPUS > 4))
    """) == ["16", "4", "7", "9", "5", "512", "2", "-3", "1"]


def test_arithmetic_reads_a_leading_zero_as_octal() -> None:
    """bash reads `$((010))` as 8, and a variable holding `010` too (primusc read 10); `$((0))` is 0; `$((0x2))`
    is 2 (primusc read a variable `x2`)."""
    assert args("""
        PAD=010
        python pretrain_gpt.py $((010)) $((PAD + 1)) $((0)) $((10)) $((0x2)) $((0X1f + 1))
    """) == ["8", "9", "0", "10", "2", "32"]


def test_positional_default_without_and_with_an_argument() -> None:
    """`${1:-ckpt}` is ckpt when the script gets no argument, the argument when it gets one."""
    script = """
        CKPT=${1:-"checkpoints/default"}
        python pretrain_gpt.py --save "$CKPT"
    """
    assert args(script) == ["--save", "checkpoints/default"]
    assert args(script, positional=("runs/a",)) == ["--save", "runs/a"]


def test_positional_without_default_is_unknown_and_unset() -> None:
    """`$1` with no argument given is whatever the caller passes: unknown, named `1`, unset."""
    result = launch("""
        python pretrain_gpt.py --load $1
    """)
    word = word_after(result, "--load")
    assert word.unknown
    why = word.unknown[0]
    assert why.variable == "1"
    assert why.unset is True
    assert "$1" in why.what


def test_special_parameters_from_positional_arguments() -> None:
    """`"$@"` keeps the arguments apart, `$#` counts them, `$0` is the script's name."""
    assert args("""
        python pretrain_gpt.py "$@" $# $0
    """, positional=("x y", "z")) == ["x y", "z", "2", FILE]


def test_set_dash_dash_replaces_the_positional_arguments() -> None:
    """`set -- --tp 4` makes `$1`=--tp, `$2`=4, `$#`=2."""
    assert args("""
        set -- --tp 4
        python pretrain_gpt.py $1 $2 $#
    """) == ["--tp", "4", "2"]


def test_a_variable_the_script_never_sets_is_unknown() -> None:
    """`$PWD` (read from the environment) is a value only the running shell knows."""
    word = word_after(launch("""
        python pretrain_gpt.py --data-cache "${PWD}/cache"
    """), "--data-cache")
    assert word.unknown and word.unknown[0].variable == "PWD"
    assert word.unknown[0].unset is True


# ---- quoting -------------------------------------------------------------------------------------


def test_single_and_double_quotes_and_escapes() -> None:
    """`'a $b'` is literal; in double quotes `\\"`, `\\$` and `\\\\` are escapes; `a\\ b` is one word."""
    assert args(r"""
        python pretrain_gpt.py 'a $b' "q \"x\" \$y \\ z" a\ b
    """) == ["a $b", 'q "x" $y \\ z', "a b"]


def test_line_continuation_and_comments() -> None:
    """A backslash-newline joins lines; `#` starts a comment to the end of the line."""
    assert args(r"""
        # a comment before
        python pretrain_gpt.py \
            --tp 2 \
            --pp 1  # trailing comment
        # a comment after
    """) == ["--tp", "2", "--pp", "1"]


def test_unquoted_expansion_splits_on_runs_of_blanks_quoted_does_not() -> None:
    """`V="  a   b  "`: `$V` is two words, `"$V"` one word with its blanks."""
    assert args("""
        V="  a   b  "
        python pretrain_gpt.py $V "$V"
    """) == ["a", "b", "  a   b  "]


def test_quotes_produced_by_expansion_are_kept() -> None:
    """`A=("--split '99,1,0'")`; unquoted `${A[@]}` gives `--split` and `'99,1,0'`, quotes kept."""
    assert args("""
        DATA_ARGS=(
            --mock-data
            "--split '99,1,0'"
        )
        python pretrain_gpt.py ${DATA_ARGS[@]}
    """) == ["--mock-data", "--split", "'99,1,0'"]


# ---- control flow --------------------------------------------------------------------------------

_IF_DTYPE = """
    DTYPE="{dtype}"
    if [[ "$DTYPE" == "fp8" ]]; then
        PREC=(--fp8-format hybrid)
    else
        PREC=(--bf16)
    fi
    python pretrain_gpt.py ${{PREC[@]}}
"""


def test_if_takes_the_then_branch() -> None:
    """`[[ "$DTYPE" == "fp8" ]]` with DTYPE=fp8 runs the `then` branch."""
    assert args(_IF_DTYPE.format(dtype="fp8")) == ["--fp8-format", "hybrid"]


def test_if_takes_the_else_branch() -> None:
    """`[[ "$DTYPE" == "fp8" ]]` with DTYPE=bf16 runs the `else` branch."""
    assert args(_IF_DTYPE.format(dtype="bf16")) == ["--bf16"]


def test_elif_with_a_glob_in_double_brackets() -> None:
    """`[[ $D == bf* ]]` matches bf16 by glob, so the `elif` branch runs."""
    assert args("""
        D=bf16
        if [[ "$D" == "fp8" ]]; then
            P=--fp8
        elif [[ $D == bf* ]]; then
            P=--bf16
        else
            P=--fp32
        fi
        python pretrain_gpt.py $P
    """) == ["--bf16"]


def test_quoted_pattern_in_double_brackets_is_literal() -> None:
    """`X=abc; [[ $X == "a*" ]]` is false."""
    assert args("""
        X=abc
        [[ $X == "a*" ]] && R=glob || R=literal
        python pretrain_gpt.py $R
    """) == ["literal"]


def test_single_bracket_string_and_numeric_tests() -> None:
    """`[ -n ]`, `[ -z ]`, `-gt`, `-lt`, and `=` (no glob in `[`) give what bash gives."""
    assert args("""
        X=abc
        E=
        N=5
        [ -n "$X" ] && A=n
        [ -z "$E" ] && B=z
        [ -z "$X" ] || C=c
        if [ $N -gt 3 ]; then D=gt; fi
        [ "$N" -lt 3 ] && F=lt || F=ge
        [ "$X" = "a*" ] && G=glob || G=literal
        python pretrain_gpt.py $A $B $C $D $F $G
    """) == ["n", "z", "c", "gt", "ge", "literal"]


def test_double_bracket_and_or_regex_and_negation() -> None:
    """`[[ a && b ]]`, `=~` regex, `! [ ... ]` and `test` evaluate as in bash."""
    assert args("""
        X=fp8_hybrid
        N=5
        [[ $N -eq 5 && -n "$X" ]] && A=and
        [[ $X =~ ^fp8 ]] && B=regex
        if ! [ $N -gt 3 ]; then C=small; else C=big; fi
        test "$X" != fp8 && D=test
        python pretrain_gpt.py $A $B $C $D
    """) == ["and", "regex", "big", "test"]


def test_and_or_lists() -> None:
    """`a && b || c` runs c when a fails; `false && x || y` runs y; `true || x` skips x."""
    assert args("""
        X=1
        [ -n "$X" ] && [ "$X" -gt 0 ] && R=both
        [ -z "$X" ] || [ "$X" = 2 ] || S=neither
        false && T=no || T=yes
        true || U=skipped
        python pretrain_gpt.py $R $S $T ${U:-unset}
    """) == ["both", "neither", "yes", "unset"]


def test_case_with_alternatives_and_globs() -> None:
    """`case` runs the first branch whose pattern (`a|b`, `llama*`, `a?`, `*`) matches."""
    assert args("""
        M=llama3_8b
        case $M in
            gpt|mixtral) L=1 ;;
            llama*) L=2 ;;
            *) L=3 ;;
        esac
        case mixtral in
            gpt|mixtral) K=1 ;;
            *) K=3 ;;
        esac
        case zz in
            a?) Z=1 ;;
            (z*) Z=paren ;;
            *) Z=other ;;
        esac
        python pretrain_gpt.py $L $K $Z
    """) == ["2", "1", "paren"]


def test_quoted_case_pattern_is_literal() -> None:
    """`case abc in "a*") ...` does not match."""
    assert args("""
        X=abc
        case $X in
            "a*") C=glob ;;
            *) C=literal ;;
        esac
        python pretrain_gpt.py $C
    """) == ["literal"]


_OPTION_LOOP = """
    TP=1
    PP=1
    while [[ $# -gt 0 ]]; do
        case $1 in
            --tp) TP="$2"; shift 2 ;;
            --pp)
                PP="$2"
                shift 2
                ;;
            -h|--help) echo usage; exit 0 ;;
            *) echo "unknown option $1"; exit 1 ;;
        esac
    done
    python pretrain_gpt.py --tp $TP --pp $PP
"""


def test_option_loop_without_arguments_never_runs_its_body() -> None:
    """`while [[ $# -gt 0 ]]` with no arguments: the loop body never runs, the defaults stay."""
    assert args(_OPTION_LOOP) == ["--tp", "1", "--pp", "1"]


def test_option_loop_reads_the_given_arguments() -> None:
    """With arguments `--tp 4` the loop sets TP=4 and shifts them away."""
    assert args(_OPTION_LOOP, positional=("--tp", "4")) == ["--tp", "4", "--pp", "1"]
    assert args(_OPTION_LOOP, positional=("--pp", "2", "--tp", "8")) == ["--tp", "8", "--pp", "2"]


def test_option_loop_exit_on_help_means_no_launch() -> None:
    """`--help` makes the script `exit 0` before it launches anything."""
    with pytest.raises(ShellError, match="no training command"):
        launch(_OPTION_LOOP, positional=("--help",))


def test_while_loop_with_a_counter() -> None:
    """`while [ $i -lt 3 ]; do ...; i=$((i+1)); done` turns three times."""
    assert args("""
        i=0
        S=
        while [ $i -lt 3 ]; do
            S="$S$i"
            i=$((i+1))
        done
        python pretrain_gpt.py $S $i
    """) == ["012", "3"]


def test_for_loop_over_words_and_quoted_words() -> None:
    """`for x in a b c` runs once per word; `for y in "p q" r` keeps `p q` whole."""
    assert args("""
        S=""
        for x in a b c; do S="$S$x"; done
        for y in "p q" r; do L+=("$y"); done
        python pretrain_gpt.py $S "${L[@]}"
    """) == ["abc", "p q", "r"]


def test_for_loop_break() -> None:
    """`break` leaves the loop: the items after it are not seen."""
    assert args("""
        S=
        for x in a b c; do
            if [ "$x" = b ]; then break; fi
            S="$S$x"
        done
        python pretrain_gpt.py $S
    """) == ["a"]


def test_functions_defined_and_called_with_arguments() -> None:
    """Both `f() {}` and `function f {}` define functions; a call runs the body with its own `$1`."""
    assert args("""
        add() { ARGS+=("$1" "$2"); }
        function say {
            echo hi
        }
        ARGS=()
        add --tp 4
        add --name "a b"
        say
        python pretrain_gpt.py "${ARGS[@]}"
    """) == ["--tp", "4", "--name", "a b"]


def test_the_launch_inside_a_function_gets_the_call_arguments() -> None:
    """`run() { python x.py "$@"; }; run --tp 2 "a b"` launches with those arguments."""
    assert args("""
        run() {
            python pretrain_gpt.py "$@"
        }
        run --tp 2 "a b"
    """) == ["--tp", "2", "a b"]


def test_return_ends_the_function() -> None:
    """Nothing after `return` in a function runs."""
    assert args("""
        f() { return; G=1; }
        f
        python pretrain_gpt.py ${G:-none}
    """) == ["none"]


def test_launch_after_cd_and() -> None:
    """`cd /workspace && python pretrain_gpt.py --a 1` launches training."""
    assert args("""
        cd /workspace && python pretrain_gpt.py --a 1
    """) == ["--a", "1"]


# ---- guards and conditions only a running shell can test ---------------------------------------


def test_a_file_test_guard_that_exits_is_taken_as_not_stopping() -> None:
    """`if [ ! -f "$P" ]; then echo ...; exit 1; fi`: the recipe runs, so the file existed."""
    result = launch("""
        P=pretrain_gpt.py
        if [ ! -f "$P" ]; then
            echo "missing $P"
            exit 1
        fi
        python $P --a 1
    """)
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--a", "1"]
    assert any("line 3" in note and "stops the script" in note for note in result.notes)


def test_an_unknown_condition_choosing_a_value_is_an_error() -> None:
    """`if [ -d /data ]; then D=/data; else D=/scratch; fi`: which D the launch gets depends on the machine."""
    with pytest.raises(ShellError, match="which branch") as err:
        launch("""
            if [ -d /data ]; then
                D=/data
            else
                D=/scratch
            fi
            python pretrain_gpt.py --data $D
        """)
    assert err.value.span is not None and err.value.span.line == 2
    assert "--set" in err.value.help


def test_an_unset_variable_in_a_condition_reads_as_empty() -> None:
    """`[ "$USE_UV" = 1 ]` with USE_UV never set is false (bash reads it empty); a note names it."""
    result = launch("""
        if [ "$USE_UV" = 1 ]; then
            PY="uv run python"
        else
            PY=python
        fi
        $PY pretrain_gpt.py --a 1
    """)
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--a", "1"]
    assert any("tested as empty" in note and "`USE_UV`" in note for note in result.notes)


def test_a_given_variable_is_tested_with_its_value() -> None:
    """`[[ -z "$TP" ]]` is false when the environment gives TP=8."""
    script = """
        if [[ -z "$TP" ]]; then TP=1; fi
        python pretrain_gpt.py --tp $TP
    """
    assert args(script) == ["--tp", "1"]
    assert args(script, given={"TP": "8"}) == ["--tp", "8"]


def test_a_command_substitution_in_a_condition_is_unknown() -> None:
    """`[[ $(hostname) == gpu* ]]` depends on the machine: a branch that sets a value cannot be chosen."""
    with pytest.raises(ShellError, match="which branch"):
        launch("""
            if [[ $(hostname) == gpu* ]]; then A=1; fi
            python pretrain_gpt.py --a ${A:-0}
        """)


def test_an_unknown_or_fallback_that_exits_does_not_stop_the_reading() -> None:
    """`mkdir -p logs || { echo fail; exit 1; }`: the recipe runs, so mkdir succeeded."""
    assert args("""
        mkdir -p logs || { echo fail; exit 1; }
        python pretrain_gpt.py --a 1
    """) == ["--a", "1"]


# ---- nested scripts: bash -c, srun, sbatch here-documents -------------------------------------


def test_bash_dash_c_runs_its_script() -> None:
    """`bash -c "python x.py --tp $TP"` expands TP in the outer shell and runs the command."""
    result = launch("""
        TP=2
        bash -c "python pretrain_gpt.py --tp $TP"
    """)
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--tp", "2"]
    assert any("bash -c" in note for note in result.notes)


def test_srun_bash_x_c_with_a_command_variable() -> None:
    """`srun --opts bash -x -c "${CMD}" 2>&1 | tee log` runs CMD, the array in it expanded, under srun and its
    options (its container is where the launch runs)."""
    assert texts("""
        ARGS=(--tp 4 --pp 2)
        CMD="python pretrain_gpt.py ${ARGS[@]}"
        srun --mpi=pmix -l --container-image=img bash -x -c "${CMD}" 2>&1 | tee log.txt
    """) == ["srun", "--mpi=pmix", "-l", "--container-image=img", "python", "pretrain_gpt.py", "--tp", "4", "--pp", "2"]


def test_sbatch_here_document_holds_the_launch() -> None:
    """`sbatch <<EOF ... EOF` submits the here-document; the launch inside it, expanded, is the launch."""
    result = launch(r"""
        NODES=4
        ARGS=(--tp 4)
        CMD="torchrun --nnodes $NODES pretrain_gpt.py ${ARGS[@]}"
        sbatch <<EOF
        #!/bin/bash
        #SBATCH --nodes=${NODES}
        srun bash -c "${CMD}" 2>&1 | tee \${SLURM_JOB_ID}.log
        EOF
        echo submitted
    """)
    assert [w.text for w in result.words] == ["srun", "torchrun", "--nnodes", "4", "pretrain_gpt.py", "--tp", "4"]
    assert ("--nodes", "4") in result.directives
    assert any("here-document" in note for note in result.notes)


def test_unquoted_here_document_expands_before_it_runs() -> None:
    """In `<<EOF`, `$TP` is the outer TP (8); `\\$TP` is left for the job, which sets TP=2."""
    assert args(r"""
        TP=8
        sbatch <<EOF
        TP=2
        python pretrain_gpt.py --tp $TP --pp \$TP
        EOF
    """) == ["--tp", "8", "--pp", "2"]


def test_quoted_here_document_does_not_expand() -> None:
    """In `<<'EOF'` nothing expands before the job runs: `$TP` is the job's TP, `\\$TP` stays `$TP`."""
    assert args(r"""
        TP=8
        sbatch <<'EOF'
        TP=2
        python pretrain_gpt.py --tp $TP --pp \$TP
        EOF
    """) == ["--tp", "2", "--pp", "$TP"]


def test_here_document_with_dash_strips_leading_tabs() -> None:
    """`<<-EOF` removes leading tabs from the body and the closing delimiter."""
    text = "\tsbatch <<-EOF\n\t#SBATCH --nodes=2\n\tpython pretrain_gpt.py --tp 2\n\tEOF\n"
    result = read_launch(text, FILE, {})
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--tp", "2"]
    assert ("--nodes", "2") in result.directives


def test_unquoted_here_document_does_not_see_the_jobs_own_assignment() -> None:
    """Outer TP unset; `sbatch <<EOF` with `TP=2` then `--tp $TP`: the job gets the outer value, not 2."""
    word = word_after(launch("""
        sbatch <<EOF
        TP=2
        python pretrain_gpt.py --tp $TP
        EOF
    """), "--tp")
    assert word.unknown and word.unknown[0].variable == "TP"


def test_sbatch_directives_in_the_script_are_recorded() -> None:
    """`#SBATCH --nodes=4` lines at the top of a batch script are sbatch options, in order."""
    result = launch("""
        #!/bin/bash
        #SBATCH --nodes=4
        #SBATCH --exclusive
        #SBATCH -t 30
        srun python pretrain_gpt.py --tp 8
    """)
    assert result.directives == (("--nodes", "4"), ("--exclusive", ""), ("-t", "30"))


def test_here_document_directives_are_recorded_once_expanded() -> None:
    """`NODES=4; sbatch <<EOF` with `#SBATCH --nodes=${NODES}`: sbatch sees `--nodes=4` once."""
    result = launch("""
        NODES=4
        sbatch <<EOF
        #SBATCH --nodes=${NODES}
        srun python pretrain_gpt.py --tp 1
        EOF
    """)
    assert result.directives == (("--nodes", "4"),)


# ---- command substitution ----------------------------------------------------------------------


def test_command_substitutions_are_unknown_words() -> None:
    """`$(hostname)`, backquotes and `"$(pwd)/x"` are values only the running shell knows."""
    result = launch("""
        H=$(hostname)
        B=`date`
        python pretrain_gpt.py --host $H --b $B --c "$(pwd)/x"
    """)
    for flag, text in (("--host", "$(hostname)"), ("--b", "`date`"), ("--c", "$(pwd)/x")):
        word = word_after(result, flag)
        assert word.text == text
        assert word.unknown
        assert "command substitution" in word.unknown[0].what
        assert word.unknown[0].unset is False


def test_command_substitution_is_never_run(tmp_path: Path) -> None:
    """Reading `$(touch F)` and `` `touch G` `` creates neither file: nothing is executed."""
    ran, ran_too = tmp_path / "ran", tmp_path / "ran_too"
    result = launch(f"""
        X=$(touch {ran})
        Y=`touch {ran_too}`
        python pretrain_gpt.py --x "$X" --y "$Y" --z "$(touch {ran})"
    """)
    assert not ran.exists() and not ran_too.exists()
    assert all(word_after(result, flag).unknown for flag in ("--x", "--y", "--z"))


# ---- what is the launch ------------------------------------------------------------------------


def test_a_flags_only_file_is_one_launch_line() -> None:
    """A file of `--flag value` lines (no continuations) is read as one command line."""
    assert texts("""
        --tp 4
        --pp 2
        # a comment
        --seq-length 4096
    """) == ["--tp", "4", "--pp", "2", "--seq-length", "4096"]


def test_given_supplies_the_environment() -> None:
    """`given={"TP": "4"}` is the environment: `${TP:-1}` is 4 and a bare `$PP` is 2."""
    result = launch("""
        TP=${TP:-1}
        python pretrain_gpt.py --tp $TP --pp $PP
    """, given={"TP": "4", "PP": "2"})
    assert [w.text for w in result.words][2:] == ["--tp", "4", "--pp", "2"]
    assert not any(w.unknown for w in result.words)
    assert not any("defaults" in note for note in result.notes)


def test_the_last_of_several_launches_is_read_with_a_note() -> None:
    """A script that launches twice: the last launch is the one read, and a note says there were two."""
    result = launch("""
        python pretrain_gpt.py --tp 1
        torchrun --nproc_per_node 8 pretrain_gpt.py --tp 2
        echo done
    """)
    assert [w.text for w in result.words] == ["torchrun", "--nproc_per_node", "8", "pretrain_gpt.py", "--tp", "2"]
    assert any("2 training commands" in note for note in result.notes)


def test_other_commands_are_ignored_and_background_launch_counts() -> None:
    """`mkdir`, `echo` and `wait` are not launches; `python x.py &` is."""
    assert args("""
        mkdir -p logs
        echo starting
        python pretrain_gpt.py --a 1 &
        wait
    """) == ["--a", "1"]


def test_a_script_with_no_launch_is_an_error() -> None:
    """A script that only echoes launches nothing."""
    with pytest.raises(ShellError, match="no training command"):
        launch("""
            echo hello
        """)


def test_launch_of_turns_the_error_into_p3121() -> None:
    """`launch_of` reports an unreadable script as diagnostic P3121 at the construct."""
    with pytest.raises(CompileError) as err:
        launch_of("if [ -d /data ]; then D=/data; else D=/scratch; fi\npython pretrain_gpt.py $D\n", FILE)
    (diagnostic,) = err.value.diagnostics
    assert diagnostic.code.id == "P3121"
    assert diagnostic.span is not None and diagnostic.span.file == FILE and diagnostic.span.line == 1
    assert "--set" in diagnostic.help


def test_launch_of_reads_a_good_script_with_given_values() -> None:
    """`launch_of` returns the same launch as `read_launch` when the script can be read."""
    result = launch_of("python pretrain_gpt.py --tp $TP\n", FILE, {"TP": "2"})
    assert [w.text for w in result.words] == ["python", "pretrain_gpt.py", "--tp", "2"]


def test_an_unclosed_quote_is_an_error() -> None:
    """`python x.py "abc` is a syntax error in bash."""
    with pytest.raises(CompileError):
        launch_of('python pretrain_gpt.py "abc\n', FILE)


# ---- spans -------------------------------------------------------------------------------------


def test_spans_point_where_each_value_was_written() -> None:
    """A word from a variable points at its assignment; an array element at the element; a literal at itself."""
    result = launch("""
        TP=4
        ARGS=(
          --tp $TP
          --name "a b"
        )
        python pretrain_gpt.py "${ARGS[@]}" --lit 7
    """)
    spans = {w.text: w.span for w in result.words}
    assert all(span is not None and span.file == FILE for span in spans.values())
    four, tp, name, lit = spans["4"], spans["--tp"], spans["a b"], spans["7"]
    assert four is not None and (four.line, four.column) == (2, 1) and four.end_column > 4  # `TP=4`
    assert tp is not None and (tp.line, tp.column) == (4, 3)
    assert name is not None and (name.line, name.column) == (5, 10)
    assert lit is not None and (lit.line, lit.column) == (7, 43)


def test_an_unknown_words_why_points_at_its_use() -> None:
    """The reason a word is unknown carries the place the script reads the value."""
    word = word_after(launch("""
        python pretrain_gpt.py --load $1
    """), "--load")
    span = word.unknown[0].span
    assert span is not None and (span.line, span.column) == (2, 31)


# ---- bounded -----------------------------------------------------------------------------------


def test_an_endless_loop_stops_at_the_step_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    """`while true; do X=1; done` never ends in bash; the reader gives up with an error, not a hang."""
    monkeypatch.setattr(shell, "MAX_STEPS", 1_000)
    with pytest.raises(ShellError, match="more than 1,000 statements") as err:
        launch("""
            while true; do X=1; done
            python pretrain_gpt.py
        """)
    assert err.value.span is not None and err.value.span.line == 2


@pytest.mark.parametrize("word", ['"$(echo ")")"', 'x$(echo ")")y'])
def test_a_quoted_paren_inside_a_substitution_does_not_end_it(word: str) -> None:
    """The lexer and the word expander scan `$( ... )` with one scanner: a `)` inside double quotes in it is
    text (the expander once stopped there and failed with an IndexError)."""
    result = launch_of(f"python pretrain_gpt.py --name {word} --pp 2\n", FILE)
    assert [w.text for w in result.words][-3:] == [word.strip('"'), "--pp", "2"]


# ---- subshells and stray parentheses -------------------------------------------------------------


def test_a_subshell_runs_its_list_and_the_script_goes_on() -> None:
    """`( ... )` is a subshell; the commands after it still run (the parser once looped forever on it)."""
    assert args("""\
        (cd /tmp && echo ready)
        python pretrain_gpt.py --tp 2
        """) == ["--tp", "2"]


@pytest.mark.parametrize(("text", "message"), [
    ("a (b)\n", "`\\(` after `a`"),
    ("Launch it (8 GPUs):\n", "`\\(` after `it`"),
    ("echo )\n", "unexpected `\\)`"),
])
def test_a_parenthesis_bash_refuses_is_an_error_not_a_hang(text: str, message: str) -> None:
    """bash stops on these with a syntax error: prose pasted with the commands, a stray `)`."""
    with pytest.raises(ShellError, match=message) as err:
        launch(text)
    assert err.value.span is not None and "quoted" in err.value.help


def test_a_given_variable_the_script_never_reads_is_named() -> None:
    """`--set NAME=VALUE` for a name the script never reads (a typo) changes nothing: the notes say so."""
    script = "NNODES=${NNODES:-1}\ntorchrun --nnodes $NNODES pretrain_gpt.py --tp 2\n"
    notes = launch(script, {"NNODE": "4"}).notes
    assert any("`--set NNODE=...` changed nothing" in n for n in notes)
    assert not any("changed nothing" in n for n in launch(script, {"NNODES": "4"}).notes)
    # a name the script sets itself: the given value holds over the script's own, and the notes say so
    given = launch("TP=2\npython pretrain_gpt.py --tp $TP\n", {"TP": "4"})
    assert [w.text for w in given.words][-1] == "4"
    assert "`--set TP` kept over the script's own assignment (line 1)" in given.notes


def test_a_placeholder_the_script_exits_on_is_named_with_its_test() -> None:
    """Megatron-Bridge's Slurm examples write `CONTAINER_IMAGE=""` and exit where it stays empty: the
    error named only the exit's position, and `--set CONTAINER_IMAGE=...` changed nothing."""
    script = ('IMAGE=""\nif [ -z "$IMAGE" ]; then\n  echo "set IMAGE"\n  exit 1\nfi\n'
              "srun --container-image=$IMAGE python pretrain_gpt.py --tp 2\n")
    with pytest.raises(ShellError) as err:
        launch(script)
    assert err.value.notes[0] == 'the script exits at 4:3 before any training command, where `if [ -z "$IMAGE" ]` (line 2) held'
    assert err.value.help == "`--set IMAGE=VALUE` gives the value it tests"
    assert [w.text for w in launch(script, {"IMAGE": "nvcr.io/nemo:26.04"}).words][1] == "--container-image=nvcr.io/nemo:26.04"


def test_a_loop_over_layouts_reads_each_with_read_and_tests_the_run_s_status() -> None:
    """Bridge's Slurm examples split "TP,PP,EP" with `IFS=',' read` and test `$?` after each run."""
    script = textwrap.dedent("""\
        CONFIGS=("2,4,4" "4,2,8")
        for C in "${CONFIGS[@]}"; do
            IFS=',' read -r TP PP EP <<< "$C"
            python pretrain_gpt.py --tp $TP --pp $PP --ep $EP
            STATUS=$?
            if [ $STATUS -ne 0 ]; then
                exit $STATUS
            fi
        done
    """)
    got = launch(script)
    assert [w.text for w in got.words][-6:] == ["--tp", "4", "--pp", "2", "--ep", "8"]
    assert "the script runs 2 training commands; read the last" in got.notes


@pytest.mark.parametrize(("ifs", "value", "fields"), [
    ("IFS=','", "2, 4 ,8]", ["2", " 4 ", "8]"]),  # only IFS's characters separate, as bash splits them
    ("IFS=':'", "2:4:8:9", ["2", "4", "8:9"]),  # the last name takes the rest
    ("", "  2   4  8 9", ["2", "4", "8 9"]),  # blanks run together and are trimmed
])
def test_read_splits_at_ifs_as_bash_does(ifs: str, value: str, fields: list[str]) -> None:
    script = f'{ifs} read -r A B C <<< "{value}"\npython pretrain_gpt.py --a "$A" --b "$B" --c "$C"\n'.lstrip()
    assert [w.text for w in launch(script).words][3::2] == fields


def test_a_command_line_echoed_before_it_runs_is_one_launch() -> None:
    # Bridge's nemotron_3 nano Slurm example echoes `$CMD` unquoted: read as 6 launches for 3 layouts
    got = launch('CMD="python pretrain_gpt.py --tp 2"\necho $CMD\nprintf "%s\\n" $CMD\n$CMD\n')
    assert not any("training commands" in n for n in got.notes)
    assert [w.text for w in got.words] == ["python", "pretrain_gpt.py", "--tp", "2"]


def test_a_given_value_holds_over_what_read_reads() -> None:
    script = 'IFS=, read -r TP PP <<< "2,4"\npython pretrain_gpt.py --tp $TP --pp $PP\n'
    got = launch(script, {"TP": "8"})
    assert [w.text for w in got.words][-4:] == ["--tp", "8", "--pp", "4"]
    assert any(n.startswith("`--set TP` kept over the script's own assignment") for n in got.notes)


def test_a_script_kept_in_a_here_document_is_read_and_run() -> None:
    """`read -r -d '' INNER <<'EOF'` keeps the script every rank runs; `bash -c "$INNER"` runs it."""
    script = textwrap.dedent("""\
        read -r -d '' INNER <<'EOF' || true
        cd /opt
        python pretrain_gpt.py --tp 2 --pp 4
        EOF
        srun bash -c "${INNER}"
    """)
    assert [w.text for w in launch(script).words][-4:] == ["--tp", "2", "--pp", "4"]


def test_a_subshell_keeps_what_it_sets_and_its_exit_to_itself() -> None:
    """bash runs `( ... )` in a copy of the shell: its assignments, exports and `exit` stay inside."""
    launch_line = "python pretrain_gpt.py --tp $TP\n"
    for inside in ("(TP=3)", "(export TP=5; echo)", "(exit 0)", "( (TP=7) )"):
        assert args(f"TP=1\n{inside}\n" + launch_line) == ["--tp", "1"], inside


def test_an_arithmetic_command_is_evaluated_or_refused() -> None:
    """`(( expr ))` is true when expr is not 0 (it was read as two subshells running a command)."""
    branch = "if (( N < 1 )); then TP=2; else TP=1; fi\npython pretrain_gpt.py --tp $TP\n"
    assert args("N=3\n" + branch) == ["--tp", "1"] and args("N=0\n" + branch) == ["--tp", "2"]
    with pytest.raises(ShellError, match="which branch"):
        launch(branch)  # N unknown: which branch runs is unknown
    with pytest.raises(ShellError, match="assigns a variable"):
        launch("TP=1\n(( TP = TP + 1 ))\npython pretrain_gpt.py --tp $TP\n")


@pytest.mark.parametrize("line", ["diff <(echo a) <(echo b)", "exec > >(tee train.log)", "my-func() { echo; }",
                                  "log::info() { echo; }"])
def test_process_substitutions_and_function_names_bash_takes(line: str) -> None:
    """`<(cmd)` is one word (`diff <(...)` looped forever), and a function may be named `log::info`."""
    assert args(line + "\npython pretrain_gpt.py --tp 2\n") == ["--tp", "2"]


def test_a_source_in_a_branch_primusc_cannot_choose_is_named() -> None:
    """Megatron-LM's examples/gptoss/02_train.sh sources its config file inside `if [ ! -f ... ]`: the file
    test is the running machine's to answer, and the skipped `source` is said, as an unconditional one is."""
    script = ('CFG=/etc/dist.sh\nif [ ! -f "$CFG" ]; then\n  echo missing\nelse\n  source "$CFG"\nfi\n'
              "python pretrain_gpt.py --tp 2\n")
    result = launch(script)
    assert [w.text for w in result.words][2:] == ["--tp", "2"]
    assert any("line 5: `source` in a branch of an `if` primusc cannot test was not followed" in n
               for n in result.notes)


def test_a_backslash_in_double_quotes_before_an_ordinary_character_is_itself() -> None:
    """`echo "run\\n"` prints `run\\n`; `T="a \\<image\\> b"` holds the backslashes (Megatron-LM's
    multimodal example). Only $ ` " \\ and a newline are escaped inside double quotes. The reader
    used to loop forever on the first such backslash."""
    assert args(r'''
        echo "starting run\n"
        T="a \<image\> b \$HOME \" \\"
        python pretrain_gpt.py --t "$T" --u "x\y"
    ''') == ["--t", 'a \\<image\\> b $HOME " \\', "--u", r"x\y"]  # as bash prints them


def test_a_script_that_runs_primus_cli_points_at_the_experiment_it_runs() -> None:
    """AMD's published launchers (Primus examples/moe_package/run_*.sh) run `primus-cli ... -- train pretrain
    --config $EXP` with overrides after it: no training command primusc reads, but the help names the
    experiment to import and a note lists the overrides to carry into it (a new user's trial had been told
    only to pass "the script that launches training")."""
    with pytest.raises(ShellError, match="no training command") as err:
        launch("""
            export EXP=examples/megatron/configs/MI355X/deepseek_v3-BF16-pretrain.yaml
            MBS=2
            ./primus-cli direct --numa -- train pretrain --config "$EXP" --micro_batch_size "$MBS" --lr 2.2e-4
        """)
    assert "primusc import-recipe examples/megatron/configs/MI355X/deepseek_v3-BF16-pretrain.yaml" in err.value.help
    assert "the script's overrides of the experiment: --micro_batch_size 2 --lr 2.2e-4" in err.value.notes
    assert not any("launcher options" in n for n in err.value.notes)  # `direct --numa` places nothing
    with pytest.raises(ShellError) as slurm:
        launch("./primus-cli slurm srun -N 2 -p mi355 -t 01:00:00 -- train pretrain --config exp.yaml\n")
    assert any(n.startswith("the CLI's own launcher options, `slurm srun -N 2 -p mi355 -t 01:00:00`, are not read")
               for n in slurm.value.notes)
    # another primus-cli command (no experiment) keeps the plain advice
    with pytest.raises(ShellError) as other:
        launch("./primus-cli --version\n")
    assert "pass the script that launches training" in other.value.help
