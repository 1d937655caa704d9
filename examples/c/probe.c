/* Probe a position through the C interface.
 *
 *   cargo rustc --release --lib --crate-type staticlib
 *   cc -O2 -Iinclude examples/c/probe.c target/release/libfrisian_tb.a -lpthread -ldl -lm -o probe
 *   ./probe tables "W:WK18,15:BK46"
 */
#include <stdio.h>
#include "frisian_tb.h"

/* The layout the Rust side has (tests/capi.rs checks it there). */
_Static_assert(sizeof(FtbPosition) == 40, "FtbPosition is 40 bytes");

static const char *name(int wdl) {
    return wdl == FTB_WIN ? "win" : wdl == FTB_DRAW ? "draw" : "loss";
}

int main(int argc, char **argv) {
    if (argc != 3) {
        fprintf(stderr, "usage: %s TABLE_DIR FEN\n", argv[0]);
        return 2;
    }
    char error[256];
    FtbTablebase *tb = ftb_open(argv[1], FTB_OFFICIAL, error, sizeof error);
    if (!tb) {
        fprintf(stderr, "error: %s\n", error);
        return 2;
    }
    int wdl, dtw;
    int code = ftb_probe_fen(tb, argv[2], &wdl, &dtw, error, sizeof error);
    if (code != FTB_OK) {
        fprintf(stderr, "error %d: %s\n", code, error);
        ftb_close(tb);
        return 2;
    }
    printf("%s: %s", argv[2], name(wdl));
    if (dtw >= 0) printf(" in %d plies", dtw);
    printf("\n");

    /* The same kind of position from bitboards, as an engine passes it:
     * White king 18 and man 15, Black king 46, White to move. */
    FtbPosition pos = {0};
    pos.men[0] = 1ull << (15 - 1);
    pos.kings[0] = 1ull << (18 - 1);
    pos.kings[1] = 1ull << (46 - 1);
    pos.seven_move_side = 255;
    code = ftb_probe_wdl(tb, &pos, &wdl);
    printf("W:WK18,15:BK46 from bitboards: %s (code %d)\n", code == FTB_OK ? name(wdl) : "-", code);
    ftb_close(tb);
    return 0;
}
