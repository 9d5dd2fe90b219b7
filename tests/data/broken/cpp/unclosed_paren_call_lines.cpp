#include <cstdio>
#include <string>
#include <vector>

struct Row {
    std::string name;
    int wins;
    int losses;
};

double ratio(const Row &row) {
    int games = row.wins + row.losses;
    return games == 0 ? 0.0 : static_cast<double>(row.wins) / games;
}

int main() {
    std::vector<Row> table{{"Falcons", 10, 2}, {"Owls", 7, 5}, {"Bears", 3, 9}};
    std::printf("%-10s %4s %4s %6s\n", "team", "W", "L", "pct");
    for (const Row &row : table) {
        std::printf(
            "%-10s %4d %4d %6.3f\n",
            row.name.c_str(),
            row.wins,
            row.losses,
            ratio(row);
    }
    return 0;
}
