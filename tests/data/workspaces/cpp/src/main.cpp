#include <fmt/core.h>

#include <boost/program_options.hpp>

namespace po = boost::program_options;

int main(int argc, char** argv) {
    po::options_description options("tiler");
    options.add_options()("size", po::value<int>()->default_value(256), "tile size");
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, options), vm);
    fmt::print("tile size {}\n", vm["size"].as<int>());
    return 0;
}
