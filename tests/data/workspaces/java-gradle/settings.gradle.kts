rootProject.name = "orders"
