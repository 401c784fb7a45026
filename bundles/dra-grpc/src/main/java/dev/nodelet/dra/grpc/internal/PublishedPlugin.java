package dev.nodelet.dra.grpc.internal;

import dev.nodelet.dra.ClaimPreparation;
import dev.nodelet.dra.DeviceHealthSource;
import dev.nodelet.dra.DeviceSnapshots;
import dev.nodelet.dra.grpc.RegisteredPlugin;
import java.nio.file.Path;
import java.util.Optional;

/** A registered driver as the API shows it: its role objects are the driver itself, for the roles it has. */
final class PublishedPlugin implements RegisteredPlugin {

  final RegisteredDriver driver;
  private final Path registrationSocket;

  PublishedPlugin(RegisteredDriver driver, Path registrationSocket) {
    this.driver = driver;
    this.registrationSocket = registrationSocket;
  }

  @Override
  public String driverName() {
    return driver.driverName();
  }

  @Override
  public Path registrationSocket() {
    return registrationSocket;
  }

  @Override
  public Path endpoint() {
    return driver.endpoint();
  }

  @Override
  public String protocol() {
    return driver.protocol();
  }

  @Override
  public Optional<String> healthService() {
    return driver instanceof KubeletPlugin p ? Optional.ofNullable(p.healthProtocol()) : Optional.empty();
  }

  @Override
  public Optional<ClaimPreparation> claimPreparation() {
    return role(ClaimPreparation.class);
  }

  @Override
  public Optional<DeviceHealthSource> healthSource() {
    return role(DeviceHealthSource.class);
  }

  @Override
  public Optional<DeviceSnapshots> deviceSnapshots() {
    return role(DeviceSnapshots.class);
  }

  private <T> Optional<T> role(Class<T> type) {
    return driver.roles().contains(type.getName()) ? Optional.of(type.cast(driver)) : Optional.empty();
  }

  @Override
  public String toString() {
    return driver + " registered by " + registrationSocket;
  }
}
