#include <stdio.h>

struct color {
    const char *name;
    unsigned char r, g, b;
};

static const struct color PALETTE[] = {
    {"black", 0, 0, 0},
    {"white", 255, 255, 255},
    {"red", 220, 50, 47},
    {"green", 133, 153, 0},
    {"blue", 38, 139, 210},
};

static void print_hex(const struct color *c) {
    printf("%-8s #%02x%02x%02x\n", c->name, c->r, c->g, c->b);
}

int main(void) {
    size_t count = sizeof PALETTE / sizeof PALETTE[0];
    for (size_t i = 0; i < count; i++) {
        print_hex(&PALETTE[i]);
    }
    return 0;
}
