package dev.nodelet.metrics.internal;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.metatype.AttributeDefinition;
import org.osgi.service.metatype.MetaTypeInformation;
import org.osgi.service.metatype.MetaTypeService;
import org.osgi.service.metatype.ObjectClassDefinition;

/**
 * Reads what {@code /configz} shows: the configurations of PIDs under {@value #PREFIX} from Config Admin, and each
 * PID's attributes (defaults, password types) from the metatype of the bundle that designates it.
 */
final class ConfigzSource {

  static final String PREFIX = "dev.nodelet.";

  private ConfigzSource() {}

  static List<Configz.Pid> read(BundleContext context, ConfigurationAdmin admin, MetaTypeService metaType)
      throws IOException {
    Map<String, List<Configz.Attribute>> singletons = new HashMap<>();
    Map<String, List<Configz.Attribute>> factories = new HashMap<>();
    if (metaType != null) {
      for (Bundle bundle : context.getBundles()) {
        MetaTypeInformation info = metaType.getMetaTypeInformation(bundle);
        if (info == null) {
          continue;
        }
        for (String pid : info.getPids()) {
          if (pid.startsWith(PREFIX)) {
            singletons.put(pid, attributes(info.getObjectClassDefinition(pid, null)));
          }
        }
        for (String pid : info.getFactoryPids()) {
          if (pid.startsWith(PREFIX)) {
            factories.put(pid, attributes(info.getObjectClassDefinition(pid, null)));
          }
        }
      }
    }
    Map<String, Configz.Pid> pids = new LinkedHashMap<>();
    singletons.forEach((pid, attributes) -> pids.put(pid, new Configz.Pid(pid, Optional.empty(), attributes)));
    Configuration[] configurations;
    try {
      configurations = admin.listConfigurations("(service.pid=" + PREFIX + "*)");
    } catch (InvalidSyntaxException e) {
      throw new IllegalStateException(e);
    }
    for (Configuration configuration : configurations == null ? new Configuration[0] : configurations) {
      if (configuration.getProperties() == null) {
        continue; // created, never updated: no component sees it
      }
      Map<String, Object> properties = new HashMap<>();
      Collections.list(configuration.getProperties().keys())
          .forEach(key -> properties.put(key, configuration.getProperties().get(key)));
      String factory = configuration.getFactoryPid();
      List<Configz.Attribute> attributes = factory != null ? factories.getOrDefault(factory, List.of())
          : singletons.getOrDefault(configuration.getPid(), List.of());
      pids.put(configuration.getPid(), new Configz.Pid(configuration.getPid(), Optional.of(properties), attributes));
    }
    return new ArrayList<>(pids.values());
  }

  private static List<Configz.Attribute> attributes(ObjectClassDefinition ocd) {
    List<Configz.Attribute> attributes = new ArrayList<>();
    AttributeDefinition[] definitions = ocd == null ? null
        : ocd.getAttributeDefinitions(ObjectClassDefinition.ALL);
    for (AttributeDefinition definition : definitions == null ? new AttributeDefinition[0] : definitions) {
      attributes.add(new Configz.Attribute(definition.getID(), defaultValue(definition),
          definition.getType() == AttributeDefinition.PASSWORD));
    }
    return attributes;
  }

  /** The default as its type: a number, a boolean or a string; an array for a multi-valued attribute. */
  private static Object defaultValue(AttributeDefinition definition) {
    String[] defaults = definition.getDefaultValue();
    if (defaults == null) {
      return null;
    }
    List<Object> values = new ArrayList<>();
    for (String value : defaults) {
      // bnd writes an empty array's default as one empty string
      if (definition.getCardinality() == 0 || !value.isEmpty()) {
        values.add(typed(definition.getType(), value));
      }
    }
    if (definition.getCardinality() == 0) {
      return values.isEmpty() ? null : values.get(0);
    }
    return values;
  }

  private static Object typed(int type, String value) {
    try {
      return switch (type) {
        case AttributeDefinition.LONG, AttributeDefinition.INTEGER, AttributeDefinition.SHORT,
            AttributeDefinition.BYTE -> Long.parseLong(value.strip());
        case AttributeDefinition.DOUBLE, AttributeDefinition.FLOAT -> Double.parseDouble(value.strip());
        case AttributeDefinition.BOOLEAN -> Boolean.parseBoolean(value.strip());
        default -> value;
      };
    } catch (NumberFormatException e) {
      return value;
    }
  }
}
