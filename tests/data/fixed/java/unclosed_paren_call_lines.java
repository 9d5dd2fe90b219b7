import java.util.logging.Level;
import java.util.logging.Logger;

class Uploader {
    private static final Logger LOG = Logger.getLogger(Uploader.class.getName());

    private final String bucket;
    private final int maxAttempts;

    Uploader(String bucket, int maxAttempts) {
        this.bucket = bucket;
        this.maxAttempts = maxAttempts;
    }

    boolean upload(String key, byte[] data) {
        for (int attempt = 1; attempt <= maxAttempts; attempt++) {
            if (send(key, data)) {
                return true;
            }
            LOG.log(
                Level.WARNING,
                "upload of {0} to {1} failed, attempt {2}",
                new Object[] {key, bucket, attempt}
            );
        }
        return false;
    }

    private boolean send(String key, byte[] data) {
        return data.length > 0 && !key.isBlank();
    }

    public static void main(String[] args) {
        Uploader uploader = new Uploader("backups", 3);
        System.out.println(uploader.upload("notes.txt", "hello".getBytes()));
    }
}
