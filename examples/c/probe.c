/* Probe a position through the C interface.
 *
 *   cargo rustc --release --lib --no-default-features --crate-type staticlib
 *   cc -O2 -Iinclude examples/c/probe.c target/release/libfrisian_tb.a -lpthread -ldl -lm -o target/probe
 *   target/probe tables "W:WK18,15:BK39"    a position given in FEN
 *   target/probe tables                     a position given as bitboards
 */
#include <stdio.h>
#include "frisian_tb.h"

/* The layout the Rust side has (tests/capi.rs checks it there). */
_Static_assert(sizeof(FtbPosition) == 40, "FtbPosition is 40 bytes");

static const char *name(int wdl) {
    return wdl == FTB_WIN ? "win" : wdl == FTB_DRAW ? "draw" : "loss";
}

static void print_value(const char *what, int wdl, int dtw) {
    printf("%s: %s", what, name(wdl));
    if (dtw >= 0) printf(" in %d %s", dtw, dtw == 1 ? "ply" : "plies");
    printf("\n");
}

int main(int argc, char **argv) {
    if (argc != 2 && argc != 3) {
        fprintf(stderr, "usage: %s TABLE_DIR [FEN]\n", argv[0]);
        return 2;
    }
    char error[256];
    FtbTablebase *tb = ftb_open(argv[1], FTB_OFFICIAL, error, sizeof error);
    if (!tb) {
        fprintf(stderr, "error: %s\n", error);
        return 2;
    }
    int wdl, dtw, code;
    if (argc == 3) {
        code = ftb_probe_fen(tb, argv[2], &wdl, &dtw, error, sizeof error);
        if (code != FTB_OK) {
            fprintf(stderr, "error %d: %s\n", code, error);
            ftb_close(tb);
            return 2;
        }
        print_value(argv[2], wdl, dtw);
    } else {
        /* A position as an engine passes it, from bitboards (bit s - 1 for
         * square s): White king 18 and man 15, Black king 46, White to move,
         * no counter running. */
        FtbPosition pos = {0};
        pos.men[0] = 1ull << (15 - 1);
        pos.kings[0] = 1ull << (18 - 1);
        pos.kings[1] = 1ull << (46 - 1);
        pos.seven_move_side = 255;
        code = ftb_probe(tb, &pos, &wdl, &dtw);
        if (code != FTB_OK) {
            fprintf(stderr, "error %d\n", code);
            ftb_close(tb);
            return 2;
        }
        print_value("W:WK18,15:BK46 from bitboards", wdl, dtw);
    }
    ftb_close(tb);
    return 0;
}
