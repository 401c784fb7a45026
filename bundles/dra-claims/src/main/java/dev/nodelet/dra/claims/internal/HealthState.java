package dev.nodelet.dra.claims.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.nodelet.dra.DeviceHealth;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The device health on disk, {@code dra_health_state} next to the checkpoint, plain JSON:
 * {@code {"Drivers":{"<driver>":{"Devices":{"<pool>/<device>":{"PoolName","DeviceName","Health","Message",
 * "LastUpdated","TimeoutMillis"}}}}}}. An unreadable file is an empty state, as in the kubelet.
 */
final class HealthState {

  static final String FILE_NAME = "dra_health_state";
  private static final Logger LOG = LoggerFactory.getLogger(HealthState.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** One device's last report. */
  record Report(DeviceHealth.Health health, String message, Instant received, Duration timeout) {
  }

  private final Path file;

  HealthState(Path folder) {
    this.file = folder.resolve(FILE_NAME);
  }

  /** The reports per driver and {@code pool/device}; empty when the file is missing or unreadable. */
  Map<String, Map<String, Report>> read() {
    Map<String, Map<String, Report>> out = new TreeMap<>();
    try {
      JsonNode root = JSON.readTree(Files.readAllBytes(file));
      root.path("Drivers").fields().forEachRemaining(d -> {
        Map<String, Report> devices = new TreeMap<>();
        d.getValue().path("Devices").fields().forEachRemaining(e -> {
          JsonNode r = e.getValue();
          devices.put(e.getKey(), new Report(DeviceHealth.Health.valueOf(r.path("Health").asText()
              .toUpperCase(java.util.Locale.ROOT)), r.path("Message").asText(""),
              Instant.parse(r.path("LastUpdated").asText()), Duration.ofMillis(r.path("TimeoutMillis").asLong())));
        });
        out.put(d.getKey(), devices);
      });
      return out;
    } catch (NoSuchFileException e) {
      return out;
    } catch (IOException | RuntimeException e) {
      LOG.warn("Device health state {} is unreadable ({}); starting with no health", file, e.toString());
      return new TreeMap<>();
    }
  }

  /** Replaces the file atomically. */
  void write(Map<String, Map<String, Report>> reports) {
    ObjectNode root = JSON.createObjectNode();
    ObjectNode drivers = root.putObject("Drivers");
    reports.forEach((driver, devices) -> {
      ObjectNode byKey = drivers.putObject(driver).putObject("Devices");
      devices.forEach((key, r) -> {
        int slash = key.lastIndexOf('/');
        ObjectNode d = byKey.putObject(key);
        d.put("PoolName", key.substring(0, slash));
        d.put("DeviceName", key.substring(slash + 1));
        d.put("Health", PodHealthStatus.healthName(r.health()));
        d.put("Message", r.message());
        d.put("LastUpdated", r.received().toString());
        d.put("TimeoutMillis", r.timeout().toMillis());
      });
    });
    try {
      Files.createDirectories(file.getParent());
      Path temp = file.resolveSibling("." + FILE_NAME + ".tmp");
      try (FileChannel out = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
          StandardOpenOption.TRUNCATE_EXISTING)) {
        out.write(java.nio.ByteBuffer.wrap(JSON.writeValueAsBytes(root)));
        out.force(true);
      }
      Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      LOG.error("Writing device health state {} failed; it is written again at the next change", file, e);
    }
  }
}
