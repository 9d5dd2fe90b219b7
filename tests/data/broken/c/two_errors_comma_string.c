#include <stdio.h>

static const double RATES[] = {
    0.10,
    0.12
    0.22,
    0.24,
};

static const double LIMITS[] = {11000.0, 44725.0, 95375.0};

static double tax(double income) {
    double owed = 0.0;
    double lower = 0.0;
    for (int i = 0; i < 3 && income > lower; i++) {
        double upper = income < LIMITS[i] ? income : LIMITS[i];
        owed += (upper - lower) * RATES[i];
        lower = LIMITS[i];
    }
    if (income > lower) {
        owed += (income - lower) * RATES[3];
    }
    return owed;
}

int main(void) {
    double income;
    while (scanf("%lf", &income) == 1) {
        printf("income %.2f -> tax %.2f\n, income, tax(income));
    }
    return 0;
}
