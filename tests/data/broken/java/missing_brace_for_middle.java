import java.util.List;

class Matrix {
    private final double[][] cells;

    Matrix(double[][] cells) {
        this.cells = cells;
    }

    Matrix times(Matrix other) {
        int rows = cells.length;
        int cols = other.cells[0].length;
        double[][] result = new double[rows][cols];
        for (int i = 0; i < rows; i++) {
            for (int j = 0; j < cols; j++) {
                for (int k = 0; k < other.cells.length; k++) {
                    result[i][j] += cells[i][k] * other.cells[k][j];
                }
            }
        }
        return new Matrix(result);
    }

    void print() {
        for (double[] row : cells) {
            System.out.println(List.of(row[0], row[1]));
    }

    public static void main(String[] args) {
        Matrix a = new Matrix(new double[][] {{1, 2}, {3, 4}});
        Matrix b = new Matrix(new double[][] {{0, 1}, {1, 0}});
        a.times(b).print();
    }
}
