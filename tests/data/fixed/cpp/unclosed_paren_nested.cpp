#include <cmath>
#include <iostream>
#include <vector>

struct Vec2 {
    double x;
    double y;
};

double length(Vec2 v) { return std::sqrt(v.x * v.x + v.y * v.y); }

Vec2 normalized(Vec2 v) {
    double len = length(v);
    if (len == 0.0) {
        return v;
    }
    return {v.x / len, v.y / len};
}

int main() {
    std::vector<Vec2> points{{3, 4}, {1, 1}, {0, 0}, {-2, 5}};
    double total = 0;
    for (const Vec2 &p : points) {
        Vec2 n = normalized(p);
        std::cout << n.x << ", " << n.y << "  length " << length(normalized(p)) << '\n';
        total += length(p);
    }
    std::cout << "sum of lengths: " << total << '\n';
    return 0;
}
