#include <iostream>
#include <string>
#include <unordered_map>
#include <vector>

using Graph = std::unordered_map<std::string, std::vector<std::string>>;

void print_graph(const Graph &graph, bool edges_only) {
    for (const auto &[node, neighbours] : graph) {
        if (edges_only) {
            for (const std::string &next : neighbours) {
                std::cout << node << " -> " << next << '\n';
            }
        } else {
            std::cout << node << ": " << neighbours.size() << " neighbours\n";
        }
    }
}

int main(int argc, char **argv) {
    Graph graph;
    graph["a"] = {"b", "c"};
    graph["b"] = {"c"};
    graph["c"] = {};
    print_graph(graph, argc > 1 && std::string(argv[1]) == "--edges");
    return 0;
}
