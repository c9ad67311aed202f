"""`mpg report`: the fleet's goodput as one self-contained HTML page of Vega-Lite charts."""
