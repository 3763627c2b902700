import FWCore.ParameterSet.Config as cms
