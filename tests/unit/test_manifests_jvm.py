"""JVM versions and frameworks: Maven pom.xml and Gradle build scripts."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.manifest_files import pins, read, write


def test_maven_properties_bom_and_release(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "pom.xml": """<?xml version="1.0"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>com.acme</groupId>
  <artifactId>svc</artifactId>
  <version>2.1.0</version>
  <properties>
    <maven.compiler.source>11</maven.compiler.source>
    <maven.compiler.release>${jdk}</maven.compiler.release>
    <jdk>21</jdk>
    <quarkus.platform.version>3.10.0</quarkus.platform.version>
    <kotlin.version>1.9.24</kotlin.version>
  </properties>
  <dependencyManagement>
    <dependencies>
      <dependency>
        <groupId>io.quarkus.platform</groupId>
        <artifactId>quarkus-bom</artifactId>
        <version>${quarkus.platform.version}</version>
        <type>pom</type>
        <scope>import</scope>
      </dependency>
      <dependency>
        <groupId>org.junit.jupiter</groupId>
        <artifactId>junit-jupiter</artifactId>
        <version>5.10.2</version>
      </dependency>
    </dependencies>
  </dependencyManagement>
  <dependencies>
    <dependency>
      <groupId>com.acme</groupId>
      <artifactId>common</artifactId>
      <version>${project.version}</version>
    </dependency>
    <dependency>
      <groupId>io.quarkus.platform</groupId>
      <artifactId>quarkus-rest</artifactId>
    </dependency>
    <dependency>
      <groupId>org.junit.jupiter</groupId>
      <artifactId>junit-jupiter</artifactId>
      <scope>test</scope>
    </dependency>
    <dependency>
      <groupId>org.example</groupId>
      <artifactId>unresolved</artifactId>
      <version>${missing.property}</version>
    </dependency>
  </dependencies>
</project>
""",
        },
    )
    info = read(tmp_path, "jvm")
    assert info.versions == {"java": "21", "kotlin": "1.9.24"}
    assert pins(info) == [
        ("io.quarkus.platform:quarkus-rest", "3.10.0", "pom.xml"),
        ("org.junit.jupiter:junit-jupiter", "5.10.2", "pom.xml"),
        ("com.acme:common", "2.1.0", "pom.xml"),
        ("org.example:unresolved", None, "pom.xml"),
    ]


def test_gradle_groovy_dsl(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "build.gradle": """
plugins {
    id 'java'
    id 'org.jetbrains.kotlin.jvm' version '1.9.0'
}

java {
    sourceCompatibility = JavaVersion.VERSION_1_8
}

dependencies {
    implementation 'com.google.guava:guava:33.2.0-jre'
    implementation group: 'io.micronaut', name: 'micronaut-http', version: '4.4.0'
    implementation platform("io.micronaut.platform:micronaut-platform:${micronautVersion}")
    testImplementation "org.mockito:mockito-core:$mockitoVersion"
}
""",
            "gradle.properties": "micronautVersion=4.4.2\nmockitoVersion=5.11.0\n",
        },
    )
    info = read(tmp_path, "jvm")
    assert info.versions == {"java": "1.8", "kotlin": "1.9.0"}
    assert pins(info) == [
        ("io.micronaut:micronaut-http", "4.4.0", "build.gradle"),
        ("io.micronaut.platform:micronaut-platform", "4.4.2", "build.gradle"),
        ("org.mockito:mockito-core", "5.11.0", "build.gradle"),
        ("com.google.guava:guava", "33.2.0-jre", "build.gradle"),
    ]
    assert info.sources == ["build.gradle", "gradle.properties"]


@pytest.mark.parametrize(
    ("snippet", "expected"),
    [
        ("kotlin { jvmToolchain(17) }", "17"),
        ("java { sourceCompatibility = JavaVersion.VERSION_11 }", "11"),
        ('java.sourceCompatibility = "17"', "17"),
        ('kotlinOptions { jvmTarget = "1.8" }', "1.8"),
        ("compilerOptions { jvmTarget.set(JvmTarget.JVM_21) }", "21"),
    ],
)
def test_gradle_java_version(tmp_path: Path, snippet: str, expected: str) -> None:
    write(tmp_path, {"build.gradle.kts": snippet + "\n"})
    assert read(tmp_path, "jvm").versions == {"java": expected}
