// Whether Java texts parse, for assist's repairs: javac's own parser, through the compiler API,
// in one long-lived JVM (run as a source file: `java JavaSyntax.java`). Each request on stdin is
// "<bytes>\n<text>" (UTF-8), each answer on stdout one JSON line: {"ok": true} or {"ok": false,
// "line", "offset", "message"} for the first error (0-based line; offset in the text's chars).

import com.sun.source.util.JavacTask;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.Writer;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.SimpleJavaFileObject;
import javax.tools.ToolProvider;

public final class JavaSyntax {
  private JavaSyntax() {}

  public static void main(String[] args) throws IOException {
    PrintStream out =
        new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
    JavaCompiler compiler = ToolProvider.getSystemJavaCompiler();
    InputStream in = new BufferedInputStream(System.in);
    for (String header = line(in); header != null; header = line(in)) {
      String text = new String(in.readNBytes(Integer.parseInt(header.trim())), StandardCharsets.UTF_8);
      out.println(compiler == null ? "{\"failed\": \"no Java compiler in this runtime\"}" : check(compiler, text));
    }
  }

  private static String line(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) return null;
      bytes.write(b);
    }
    return bytes.toString(StandardCharsets.US_ASCII);
  }

  private static String check(JavaCompiler compiler, String text) throws IOException {
    JavaFileObject source =
        new SimpleJavaFileObject(URI.create("string:///Candidate.java"), JavaFileObject.Kind.SOURCE) {
          @Override
          public CharSequence getCharContent(boolean ignoreEncodingErrors) {
            return text;
          }
        };
    DiagnosticCollector<JavaFileObject> found = new DiagnosticCollector<>();
    JavacTask task =
        (JavacTask) compiler.getTask(
            Writer.nullWriter(), null, found, List.of("-proc:none", "-Xlint:none"), null, List.of(source));
    task.parse();
    for (Diagnostic<? extends JavaFileObject> d : found.getDiagnostics()) {
      if (d.getKind() == Diagnostic.Kind.ERROR) {
        return "{\"ok\": false, \"line\": " + (d.getLineNumber() - 1) + ", \"offset\": " + d.getPosition()
            + ", \"message\": " + quoted(d.getMessage(Locale.ROOT)) + "}";
      }
    }
    return "{\"ok\": true}";
  }

  private static String quoted(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') out.append('\\').append(c);
      else if (c < 0x20) out.append(String.format("\\u%04x", (int) c));
      else out.append(c);
    }
    return out.append('"').toString();
  }
}
