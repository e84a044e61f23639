/*
 * replay: runs a fuzz target over the files given on the command line (a
 * seed corpus), without libFuzzer, so `make test` checks the corpus with any
 * compiler. Prints "replayed N inputs" and exits 0, or dies on a failed assert.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int replay_file(const char *path)
{
    static uint8_t buf[1 << 20];
    FILE *f = fopen(path, "rb");
    size_t n;

    if (f == NULL) {
        perror(path);
        return -1;
    }
    n = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    LLVMFuzzerTestOneInput(buf, n);
    return 0;
}

int main(int argc, char **argv)
{
    int n = 0;

    for (int i = 1; i < argc; i++) {
        if (replay_file(argv[i]) < 0) return 1;
        n++;
    }
    printf("replayed %d inputs\n", n);
    return 0;
}
