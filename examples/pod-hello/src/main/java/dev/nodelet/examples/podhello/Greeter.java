package dev.nodelet.examples.podhello;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.ConfigurationPolicy;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Modified;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The example pod's component. Its configuration is the container's {@code env} (PID {@value #PID}, the default
 * for a container named {@code hello}); Nodelet delivers it to this bundle only, and again when a referenced
 * ConfigMap changes ({@link #modified}). The Secret volume {@code token} is read from the folder Nodelet gives as
 * {@code nodelet.volume.token}; its content is never logged, only its size. The devices of the container's
 * resource claims ({@code nodelet.devices}, see {@code pod-gpu.yaml}) are logged when it has any.
 */
@Component(configurationPid = Greeter.PID, configurationPolicy = ConfigurationPolicy.REQUIRE, service = {})
public final class Greeter {

  static final String PID = "dev.nodelet.pod.hello";

  private static final Logger LOG = LoggerFactory.getLogger(Greeter.class);

  /** The container's env and Nodelet's properties: '_' stands for '.' in property names. */
  @interface Config {
    String GREETING() default "hello";

    String nodelet_pod_name() default "";

    String nodelet_volume_token() default "";

    /** The devices of the container's resource claims, {@code driver/pool/device}; none without claims. */
    String[] nodelet_devices() default {};

    String[] nodelet_devices_cdi() default {};
  }

  @Activate
  public Greeter(Config config) {
    LOG.info("Pod {} says: {}", config.nodelet_pod_name(), config.GREETING());
    readToken(config);
    logDevices(config);
  }

  @Modified
  void modified(Config config) {
    LOG.info("Pod {} now says: {}", config.nodelet_pod_name(), config.GREETING());
    readToken(config);
  }

  @Deactivate
  void deactivate() {
    LOG.info("Greeter stopped");
  }

  private static void logDevices(Config config) {
    if (config.nodelet_devices().length > 0) {
      LOG.info("Pod {} has the devices {} (CDI {})", config.nodelet_pod_name(),
          String.join(", ", config.nodelet_devices()), String.join(", ", config.nodelet_devices_cdi()));
    }
  }

  private static void readToken(Config config) {
    if (config.nodelet_volume_token().isEmpty()) {
      return;
    }
    Path token = Path.of(config.nodelet_volume_token(), "token");
    try {
      LOG.info("Read the Secret file {} ({} bytes)", token, Files.size(token));
    } catch (IOException e) {
      LOG.warn("Cannot read the Secret file {}: {}", token, e.toString());
    }
  }
}
