#include <stdio.h>

/* Convert a Celsius table to Fahrenheit. */

static double to_fahrenheit(double celsius) {
    return celsius * 9.0 / 5.0 + 32.0;
}

int main(void) {
    double low = -20.0;
    double high = 40.0;
    double step = 10.0;
    printf("%8s %8s\n", "C", "F");
    for (double c = low; c <= high; c += step) {
        double f = to_fahrenheit(c);
        printf("%8.1f %8.1f\n", c, f);
    }
    return 0;
}
